#include "kiln/base/cache_dir.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace kiln {

namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

fs::path default_cache_dir() {
  if (auto dir = env("KILN_CACHE_DIR"); !dir.empty()) return dir;
  if (auto dir = env("XDG_CACHE_HOME"); !dir.empty()) return fs::path(dir) / "kiln";
  if (auto home = env("HOME"); !home.empty()) return fs::path(home) / ".cache" / "kiln";
  return fs::temp_directory_path() / ("kiln-cache-" + std::to_string(getuid()));
}

}  // namespace kiln
