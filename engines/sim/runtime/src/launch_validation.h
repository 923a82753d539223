// The checks a real runtime makes before a kernel runs, with the error code it returns:
// grid and block limits, __launch_bounds__/.reqntid, shared memory (the 48 KB default and the
// cudaFuncSetAttribute opt-in), and cluster shape. Pure: no runtime state.
#pragma once

#include <cuda_runtime_api.h>

#include <optional>
#include <string>

#include "kiln/sim/device.h"

namespace kiln::sim::runtime {

// The per-function settings made through cudaFuncSetAttribute that a launch depends on.
struct FunctionLimits {
  std::optional<uint32_t> max_dynamic_shared;  // nullopt: the default (48 KB less static)
  bool non_portable_cluster = false;
};

struct LaunchCheck {
  cudaError_t code = cudaSuccess;
  std::string message;  // what was wrong and what to do; empty on success
  bool ok() const { return code == cudaSuccess; }
};

// The default for cudaFuncAttributeMaxDynamicSharedMemorySize: what fits under the 48 KB
// per-block limit beside the kernel's static shared memory.
uint32_t default_max_dynamic_shared(const DeviceProperties& device, const KernelInfo& kernel);

// The largest value cudaFuncSetAttribute(MaxDynamicSharedMemorySize) accepts for the kernel.
uint32_t optin_max_dynamic_shared(const DeviceProperties& device, const KernelInfo& kernel);

// `config.cluster` is what the launch asked for ({1,1,1} when it set no cluster attribute);
// `launch_set_cluster` says whether it set one. The kernel's compiled cluster shape
// (KernelInfo::cluster) applies when the launch sets none.
LaunchCheck validate_launch(const DeviceProperties& device, const KernelInfo& kernel,
                            const FunctionLimits& limits, const LaunchConfig& config,
                            bool launch_set_cluster);

}  // namespace kiln::sim::runtime
