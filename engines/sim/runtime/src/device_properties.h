// The simulated device as cudaGetDeviceProperties and cudaDeviceGetAttribute describe it,
// from the simulator's DeviceProperties (an H200 unless configured otherwise).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>

#include "kiln/sim/device.h"

namespace kiln::sim::runtime {

// Shared memory the runtime reserves per block (sharedMemPerBlockOptin excludes it).
inline constexpr int kReservedSharedPerBlock = 1024;
inline constexpr int kMaxBlocksPerMultiprocessor = 32;
inline constexpr int kTotalConstantMemory = 64 * 1024;
// The largest cudaAccessPolicyWindow::num_bytes (accessPolicyMaxWindowSize of an H200).
inline constexpr int kMaxAccessPolicyWindowBytes = 128 * 1024 * 1024;

// cudaLimitPersistingL2CacheSize as an H200 (CUDA 13) treats it: at most
// persistingL2CacheMaxSize, 5/8 of the L2 (39321600 bytes); set in steps of a tenth of that,
// rounded up; 3 steps by default.
inline uint64_t persisting_l2_max_bytes(const DeviceProperties& device) {
  return uint64_t{device.l2_cache_bytes} / 8 * 5;
}
inline uint64_t persisting_l2_step_bytes(const DeviceProperties& device) {
  return persisting_l2_max_bytes(device) / 10;
}
inline uint64_t persisting_l2_default_bytes(const DeviceProperties& device) {
  return 3 * persisting_l2_step_bytes(device);
}

void fill_device_prop(const DeviceProperties& device, cudaDeviceProp* prop);

// nullopt for attributes the simulator does not model.
std::optional<int> device_attribute(const DeviceProperties& device, cudaDeviceAttr attribute);

}  // namespace kiln::sim::runtime
