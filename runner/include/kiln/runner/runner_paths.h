// Where the runner keeps things when not told.
#pragma once

#include <filesystem>

namespace kiln::runner {

// kiln::default_cache_dir()/runner.
std::filesystem::path default_runner_cache_dir();

// kiln-worker next to the running executable (kiln and kiln-worker install together),
// or, in a build tree, build/runner/worker/kiln-worker beside build/cli/kiln.
std::filesystem::path default_worker_path();

}  // namespace kiln::runner
