#include "zoo_paths.h"

#include "kiln/base/env.h"

namespace kiln::zoo {
namespace {

bool is_dir(const std::filesystem::path& path) {
  std::error_code error;
  return !path.empty() && std::filesystem::is_directory(path, error);
}

}  // namespace

std::filesystem::path zoo_source_dir() {
  if (auto dir = env_value("KILN_ZOO_DIR")) return *dir;
  const std::filesystem::path configured = KILN_ZOO_SOURCE_DIR;
  if (is_dir(configured)) return configured;
  std::error_code error;
  for (auto dir = std::filesystem::current_path(error); !dir.empty(); dir = dir.parent_path()) {
    if (std::filesystem::exists(dir / "kb" / "zoo" / "techniques.json", error))
      return dir / "kb" / "zoo";
    if (dir == dir.parent_path()) break;
  }
  return {};
}

std::filesystem::path zoo_library_dir() {
  if (auto dir = env_value("KILN_ZOO_LIB_DIR")) return *dir;
  const std::filesystem::path configured = KILN_ZOO_BUILD_DIR;
  if (is_dir(configured)) return configured;
  std::error_code error;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const auto beside = exe.parent_path().parent_path().parent_path() / "zoo";
    if (is_dir(beside)) return beside;
  }
  return {};
}

}  // namespace kiln::zoo
