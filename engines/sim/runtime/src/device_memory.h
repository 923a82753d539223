// Simulated device memory as the runtime API sees it: allocation and free, copies and fills
// between host memory and device memory, and the device range of a __device__ or __constant__
// variable, with the checks and error codes of the real runtime. Device pointers are simulated
// addresses (runtime_state.h); the copy kind cudaMemcpyDefault is resolved by looking the
// pointers up among the allocations. The caller holds the state's mutex.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "runtime_state.h"

namespace kiln::sim::runtime {

// `api` names the calling function in messages ("cudaMemcpyAsync").
cudaError_t copy_memory(RuntimeState& state, const char* api, void* destination, const void* source,
                        size_t bytes, cudaMemcpyKind kind);

cudaError_t copy_memory_2d(RuntimeState& state, const char* api, void* destination,
                           size_t destination_pitch, const void* source, size_t source_pitch,
                           size_t width, size_t height, cudaMemcpyKind kind);

cudaError_t fill_memory(RuntimeState& state, const char* api, void* destination, int value,
                        size_t bytes);

cudaError_t fill_memory_2d(RuntimeState& state, const char* api, void* destination, size_t pitch,
                           int value, size_t width, size_t height);

cudaError_t allocate_memory(RuntimeState& state, const char* api, void** pointer, size_t bytes);
cudaError_t free_memory(RuntimeState& state, const char* api, void* pointer);

// The device address and size of a __device__/__constant__ variable, by its host shadow.
cudaError_t symbol_range(RuntimeState& state, const char* api, const void* symbol,
                         uint64_t* address, size_t* bytes);

}  // namespace kiln::sim::runtime
