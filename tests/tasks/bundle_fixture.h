// A private copy of a bundled task in a temporary folder, for tests that break it.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>

#include "support/temp_dir.h"

namespace kiln::tasks::testing {

using kiln::testing::read_text;
using kiln::testing::TempDir;
using kiln::testing::write_text;

inline std::filesystem::path bundled_tasks_dir() { return KILN_TASKS_DIR; }

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
