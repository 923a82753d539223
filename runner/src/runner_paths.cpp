#include "kiln/runner/runner_paths.h"

#include "kiln/base/cache_dir.h"

namespace kiln::runner {

namespace fs = std::filesystem;

fs::path default_runner_cache_dir() { return default_cache_dir() / "runner"; }

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
