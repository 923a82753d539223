// The compilers kiln builds with and where they are: nvcc (which runs ptxas) under the CUDA
// root, the host C++ compiler for a task's CPU reference, and the folder holding kiln/abi.h,
// which kernels and references include. nvcc's version is part of every compile cache key, so
// a toolkit upgrade never serves stale results.
#pragma once

#include <filesystem>
#include <string>

#include "kiln/base/result.h"

namespace kiln::compiler {

struct Toolchain {
  std::filesystem::path cuda_root = "/usr/local/cuda";
  std::filesystem::path nvcc;         // empty: cuda_root/bin/nvcc (see nvcc_path)
  std::string cxx = "g++";            // builds CPU references
  std::filesystem::path abi_include;  // the folder holding kiln/abi.h; empty: not found
  std::string nvcc_version;           // "Cuda compilation tools, release 13.0, V13.0.88 ..."; empty
                                      // until probe_toolchain has run nvcc --version
  // Non-empty: kernels are built for kiln's simulated CUDA runtime, this libkiln_cudart_sim.so
  // (engines/sim/runtime), instead of the GPU: PTX only, uncompressed, no libcudart. The
  // simulated kiln-worker sets it (runner/worker/README.md, "The simulated worker").
  std::filesystem::path simulated_runtime;

  std::filesystem::path nvcc_path() const {
    return nvcc.empty() ? cuda_root / "bin" / "nvcc" : nvcc;
  }
};

// The toolchain the environment names; starts no process. cuda_root: KILN_CUDA_ROOT, else the
// toolkit kiln was built against. nvcc: KILN_NVCC, else cuda_root/bin/nvcc. cxx: KILN_CXX, else
// g++. abi_include: the first of KILN_ABI_INCLUDE, `executable`'s ../include and include/ (an
// installed kiln), and the source tree's tasks/include that holds kiln/abi.h; an empty
// `executable` skips the two beside it.
Toolchain toolchain_from_environment(const std::filesystem::path& executable = {});

// toolchain_from_environment() with nvcc_version filled by running `nvcc --version`; an error
// that says how to point kiln at a toolkit when nvcc is missing or does not run.
Result<Toolchain> probe_toolchain();

}  // namespace kiln::compiler
