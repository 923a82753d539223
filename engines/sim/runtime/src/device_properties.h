// The simulated device as cudaGetDeviceProperties and cudaDeviceGetAttribute describe it,
// from the simulator's DeviceProperties (an H200 unless configured otherwise).
#pragma once

#include <cuda_runtime_api.h>

#include <optional>

#include "kiln/sim/device.h"

namespace kiln::sim::runtime {

// Shared memory the runtime reserves per block (sharedMemPerBlockOptin excludes it).
inline constexpr int kReservedSharedPerBlock = 1024;
inline constexpr int kMaxBlocksPerMultiprocessor = 32;
inline constexpr int kTotalConstantMemory = 64 * 1024;

void fill_device_prop(const DeviceProperties& device, cudaDeviceProp* prop);

// nullopt for attributes the simulator does not model.
std::optional<int> device_attribute(const DeviceProperties& device, cudaDeviceAttr attribute);

}  // namespace kiln::sim::runtime
