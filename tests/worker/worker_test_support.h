// Shared helpers for the worker's tests: temporary folders, writing files, and where the
// source tree and the worker are.
#pragma once

#include <filesystem>
#include <string>

namespace kiln::worker::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

void write_text(const std::filesystem::path& path, const std::string& text);
std::string read_text(const std::filesystem::path& path);
// The source tree (KILN_SOURCE_DIR in the environment, else the one this was built from).
std::filesystem::path source_dir();

}  // namespace kiln::worker::testing
