#include "launch_validation.h"

#include <algorithm>

namespace kiln::sim::runtime {
namespace {

constexpr uint32_t kPortableClusterSize = 8;
constexpr uint32_t kMaxClusterSize = 16;  // with cudaFuncAttributeNonPortableClusterSizeAllowed

std::string dims(Dim3 d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

uint64_t volume(Dim3 d) { return uint64_t{d.x} * d.y * d.z; }

LaunchCheck reject(cudaError_t code, std::string message) {
  return LaunchCheck{code, std::move(message)};
}

bool is_unset(Dim3 d) { return volume(d) <= 1; }

}  // namespace

uint32_t default_max_dynamic_shared(const DeviceProperties& device, const KernelInfo& kernel) {
  const uint32_t limit = device.shared_memory_per_block;
  return kernel.static_shared_bytes >= limit ? 0 : limit - kernel.static_shared_bytes;
}

uint32_t optin_max_dynamic_shared(const DeviceProperties& device, const KernelInfo& kernel) {
  const uint32_t limit = device.shared_memory_per_block_optin;
  return kernel.static_shared_bytes >= limit ? 0 : limit - kernel.static_shared_bytes;
}

LaunchCheck validate_launch(const DeviceProperties& device, const KernelInfo& kernel,
                            const FunctionLimits& limits, const LaunchConfig& config,
                            bool launch_set_cluster) {
  const std::string& name = kernel.name;
  const Dim3 grid = config.grid;
  const Dim3 block = config.block;
  if (volume(grid) == 0 || volume(block) == 0)
    return reject(cudaErrorInvalidConfiguration,
                  "launch of " + name + " with grid " + dims(grid) + " and block " + dims(block) +
                      ": every dimension must be at least 1 (an empty problem should return "
                      "before launching)");
  const Dim3 max_block = device.max_block_dim;
  if (block.x > max_block.x || block.y > max_block.y || block.z > max_block.z ||
      volume(block) > device.max_threads_per_block)
    return reject(cudaErrorInvalidConfiguration,
                  "launch of " + name + " with block " + dims(block) + " (" +
                      std::to_string(volume(block)) + " threads): a block may have at most " +
                      std::to_string(device.max_threads_per_block) + " threads and dimensions " +
                      dims(max_block));
  const Dim3 max_grid = device.max_grid_dim;
  if (grid.x > max_grid.x || grid.y > max_grid.y || grid.z > max_grid.z)
    return reject(cudaErrorInvalidConfiguration,
                  "launch of " + name + " with grid " + dims(grid) + ": the grid may be at most " +
                      dims(max_grid) + "; put the large dimension in x or loop inside the kernel");
  if (kernel.max_threads != 0 && volume(block) > kernel.max_threads)
    return reject(cudaErrorLaunchOutOfResources,
                  "launch of " + name + " with " + std::to_string(volume(block)) +
                      " threads per block, but the kernel was compiled for at most " +
                      std::to_string(kernel.max_threads) +
                      " (__launch_bounds__ / .maxntid); launch fewer threads or raise the bound");
  const Dim3 required = kernel.required_block;
  if (volume(required) != 0 &&
      (required.x != block.x || required.y != block.y || required.z != block.z))
    return reject(cudaErrorInvalidConfiguration,
                  "launch of " + name + " with block " + dims(block) +
                      ", but the kernel requires exactly " + dims(required) + " (.reqntid)");

  const uint32_t dynamic = config.dynamic_shared_bytes;
  const uint32_t allowed =
      limits.max_dynamic_shared.value_or(default_max_dynamic_shared(device, kernel));
  if (dynamic > allowed) {
    std::string message = "launch of " + name + " asks for " + std::to_string(dynamic) +
                          " bytes of dynamic shared memory (plus " +
                          std::to_string(kernel.static_shared_bytes) + " static)";
    const uint32_t optin = optin_max_dynamic_shared(device, kernel);
    if (dynamic > optin) {
      message += "; the device allows at most " +
                 std::to_string(device.shared_memory_per_block_optin) +
                 " bytes per block in all, so use less shared memory";
    } else if (limits.max_dynamic_shared) {
      message += ", but cudaFuncSetAttribute(MaxDynamicSharedMemorySize) set the limit to " +
                 std::to_string(allowed) + "; raise it to at least " + std::to_string(dynamic);
    } else {
      message += "; the limit is " + std::to_string(allowed) +
                 " without opt-in: call cudaFuncSetAttribute(kernel, "
                 "cudaFuncAttributeMaxDynamicSharedMemorySize, " +
                 std::to_string(dynamic) + ") before launching";
    }
    return reject(cudaErrorInvalidValue, message);
  }

  const bool compiled_cluster = !is_unset(kernel.cluster) && volume(kernel.cluster) != 0;
  if (compiled_cluster && launch_set_cluster &&
      (kernel.cluster.x != config.cluster.x || kernel.cluster.y != config.cluster.y ||
       kernel.cluster.z != config.cluster.z))
    return reject(cudaErrorInvalidClusterSize,
                  "launch of " + name + " sets cluster " + dims(config.cluster) +
                      " but the kernel was compiled with __cluster_dims__ " + dims(kernel.cluster) +
                      "; drop the launch attribute or make them agree");
  const Dim3 cluster = compiled_cluster ? kernel.cluster : config.cluster;
  if (volume(cluster) == 0)
    return reject(cudaErrorInvalidClusterSize, "launch of " + name + " with cluster " +
                                                   dims(cluster) +
                                                   ": every cluster dimension must be at least 1");
  if (grid.x % cluster.x != 0 || grid.y % cluster.y != 0 || grid.z % cluster.z != 0)
    return reject(cudaErrorInvalidClusterSize, "launch of " + name + ": grid " + dims(grid) +
                                                   " is not a multiple of the cluster " +
                                                   dims(cluster) +
                                                   "; round the grid up to whole clusters");
  const uint32_t cluster_limit =
      limits.non_portable_cluster ? kMaxClusterSize : kPortableClusterSize;
  if (volume(cluster) > cluster_limit)
    return reject(cudaErrorInvalidClusterSize,
                  "launch of " + name + " with cluster " + dims(cluster) + " (" +
                      std::to_string(volume(cluster)) + " blocks): at most " +
                      std::to_string(cluster_limit) + " blocks per cluster" +
                      (limits.non_portable_cluster
                           ? std::string()
                           : std::string(" unless cudaFuncSetAttribute(kernel, "
                                         "cudaFuncAttributeNonPortableClusterSizeAllowed, 1) "
                                         "allows up to 16")));
  return {};
}

}  // namespace kiln::sim::runtime
