#include "kiln/runner/runner_paths.h"

#include "kiln/base/cache_dir.h"
#include "kiln/base/program_path.h"

namespace kiln::runner {

namespace fs = std::filesystem;

fs::path default_runner_cache_dir() { return default_cache_dir() / "runner"; }

fs::path default_worker_path() { return program_beside_self("kiln-worker"); }

}  // namespace kiln::runner
