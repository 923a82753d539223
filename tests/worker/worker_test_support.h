// Shared helpers for the worker's tests: temporary folders, writing files, building a
// small shared object with g++, and where the source tree and the worker are.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

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
// Compiles C++ `source` into a shared object with g++; empty path (and a test failure) on error.
std::filesystem::path build_shared_object(const std::filesystem::path& dir, const std::string& name,
                                          const std::string& source,
                                          const std::vector<std::string>& flags = {});

}  // namespace kiln::worker::testing
