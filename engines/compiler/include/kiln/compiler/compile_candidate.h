// Compiles one candidate kernel.cu with nvcc for one architecture, with -lineinfo and the
// ptxas resource report, through the compile cache. This is the entry point the compile,
// simulate and synccheck tools share: the PTX it returns is the one ptxas assembled.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/compiler/compile_result.h"
#include "kiln/compiler/occupancy.h"
#include "kiln/compiler/toolchain.h"

namespace kiln::compiler {

struct CompileRequest {
  std::string source;                   // the kernel.cu text
  std::string file_name = "kernel.cu";  // shown in diagnostics and the PTX (a relative path)
  std::string arch = "sm_90a";
  std::vector<std::string> defines;                 // "NAME" or "NAME=VALUE"
  std::vector<std::string> flags;                   // allow-listed: compile_flags.h
  std::filesystem::path abi_include;                // the folder holding kiln/abi.h (tasks/include)
  std::vector<std::filesystem::path> include_dirs;  // more -I folders (the candidate's own)

  // For the occupancy estimate (not part of the build).
  int block_size = 0;  // 0: the kernel's __launch_bounds__ (.reqntid/.maxntid), else 256
  int64_t dynamic_smem_bytes = 0;
  std::optional<SmLimits> sm_limits;  // empty: sm_limits_for_arch(arch)

  std::optional<Toolchain> toolchain;  // empty: probe_toolchain() (runs nvcc --version)
  std::filesystem::path cache_root;    // empty: kiln::default_cache_dir()
  double timeout_seconds = 300;
};

// A Result error means kiln could not try: a bad arch or flag, no nvcc, no kiln/abi.h, an
// unwritable cache. A candidate that does not compile is a result with ok == false and its
// diagnostics.
Result<CompileResult> compile_candidate(const CompileRequest& request);

// The occupancy inputs applied to kernels (from a compile or the cache): block size, dynamic
// shared memory and the occupancy estimate. Used by compile_candidate; public for tests.
void estimate_occupancy(std::vector<KernelReport>& kernels, int block_size,
                        int64_t dynamic_smem_bytes, const SmLimits& limits);

}  // namespace kiln::compiler
