// Pinned host memory on the simulated device: cudaMallocHost and cudaHostAlloc return ordinary
// host memory (nothing is pinned on a CPU), tracked so that cudaHostGetDevicePointer can give
// a simulated device address whose loads and stores reach that very buffer: a kernel's writes
// through it are seen by the host at once and the other way round. As on a device with unified
// addressing every allocation can be mapped, cudaHostAllocMapped or not; the mapping is made on
// the first cudaHostGetDevicePointer. The host pointer itself is not a device address
// (cudaDevAttrCanUseHostPointerForRegisteredMem is 0). The caller holds the state's mutex.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "runtime_state.h"

namespace kiln::sim::runtime {

cudaError_t allocate_host(RuntimeState& state, const char* api, void** pointer, size_t bytes,
                          unsigned flags);
cudaError_t free_host(RuntimeState& state, void* pointer);
cudaError_t host_device_pointer(RuntimeState& state, void** device, void* host, unsigned flags);

// The pinned allocation holding `host` (its base and record), or nullptr.
HostAllocation* find_host_allocation(RuntimeState& state, const void* host, uintptr_t* base);

// The device address of a host allocation, mapping it on first use; 0 on failure.
uint64_t map_host_allocation(RuntimeState& state, HostAllocation& allocation);

}  // namespace kiln::sim::runtime
