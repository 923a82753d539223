// The CUDA toolkit kiln compiles with: where nvcc is, and which nvcc it is (the version is
// part of every compile cache key, so a toolkit upgrade never serves stale results).
#pragma once

#include <filesystem>
#include <string>

#include "kiln/base/result.h"

namespace kiln::compiler {

struct Toolchain {
  std::filesystem::path cuda_root;  // /usr/local/cuda
  std::filesystem::path nvcc;       // cuda_root/bin/nvcc unless KILN_NVCC says otherwise
  std::string nvcc_version;         // "Cuda compilation tools, release 13.0, V13.0.88 ..."; empty
                                    // until probe_toolchain has run nvcc --version
};

// KILN_CUDA_ROOT, else the toolkit kiln was built against; KILN_NVCC overrides the nvcc path.
// Starts no process.
Toolchain toolchain_from_environment();

// toolchain_from_environment() with nvcc_version filled by running `nvcc --version`; an error
// that says how to point kiln at a toolkit when nvcc is missing or does not run.
Result<Toolchain> probe_toolchain();

}  // namespace kiln::compiler
