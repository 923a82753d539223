#include "kiln/runner/runner_paths.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace kiln::runner {

namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

fs::path default_runner_cache_dir() {
  if (auto dir = env("KILN_CACHE_DIR"); !dir.empty()) return fs::path(dir) / "runner";
  if (auto dir = env("XDG_CACHE_HOME"); !dir.empty()) return fs::path(dir) / "kiln" / "runner";
  if (auto home = env("HOME"); !home.empty()) return fs::path(home) / ".cache" / "kiln" / "runner";
  return fs::temp_directory_path() / ("kiln-runner-" + std::to_string(getuid()));
}

fs::path default_worker_path() {
  std::error_code error;
  fs::path exe = fs::read_symlink("/proc/self/exe", error);
  if (error) return "kiln-worker";
  fs::path beside = exe.parent_path() / "kiln-worker";
  // In a build tree kiln is build/cli/kiln and the worker build/runner/worker/kiln-worker.
  fs::path build_tree = exe.parent_path().parent_path() / "runner" / "worker" / "kiln-worker";
  if (!fs::exists(beside, error) && fs::exists(build_tree, error)) return build_tree;
  return beside;
}

}  // namespace kiln::runner
