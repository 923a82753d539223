#include "kiln/base/cache_dir.h"

#include <unistd.h>

#include <string>

#include "kiln/base/env.h"

namespace kiln {

namespace fs = std::filesystem;

fs::path default_cache_dir() {
  if (auto dir = env_value("KILN_CACHE_DIR")) return *dir;
  if (auto dir = env_value("XDG_CACHE_HOME")) return fs::path(*dir) / "kiln";
  if (auto home = env_value("HOME")) return fs::path(*home) / ".cache" / "kiln";
  return fs::temp_directory_path() / ("kiln-cache-" + std::to_string(getuid()));
}

}  // namespace kiln
