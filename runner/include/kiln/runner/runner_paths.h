// Where the runner keeps things when not told.
#pragma once

#include <filesystem>

namespace kiln::runner {

// kiln::default_cache_dir()/runner.
std::filesystem::path default_runner_cache_dir();

// kiln-worker next to the running executable: kiln and kiln-worker build into one bin
// folder and install together.
std::filesystem::path default_worker_path();

}  // namespace kiln::runner
