// A private copy of a bundled task in a temporary folder, for tests that break it.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>

namespace kiln::tasks::testing {

inline std::filesystem::path bundled_tasks_dir() { return KILN_TASKS_DIR; }

// A fresh, empty folder under the system temp dir; removed by the destructor.
class TempDir {
 public:
  TempDir() {
    std::random_device random;
    path_ = std::filesystem::temp_directory_path() /
            ("kiln_tasks_test_" + std::to_string(random()) + std::to_string(random()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// Copies tasks/SOURCE/ to TEMP/FOLDER/ (the folder name must match task.json's
// name, so a rename also rewrites "name").
class BundleCopy {
 public:
  explicit BundleCopy(const std::string& source = "fp16_gemm", const std::string& folder = "")
      : dir_(temp_.path() / (folder.empty() ? source : folder)) {
    std::filesystem::copy(bundled_tasks_dir() / source, dir_,
                          std::filesystem::copy_options::recursive);
    if (!folder.empty()) {
      auto json = task_json();
      json["name"] = folder;
      set_task_json(json);
    }
  }
  const std::filesystem::path& dir() const { return dir_; }
  const std::filesystem::path& root() const { return temp_.path(); }

  nlohmann::json task_json() const { return nlohmann::json::parse(read_text(dir_ / "task.json")); }
  void set_task_json(const nlohmann::json& json) const {
    write_text(dir_ / "task.json", json.dump(2));
  }

 private:
  TempDir temp_;
  std::filesystem::path dir_;
};

}  // namespace kiln::tasks::testing
