#include "host_memory.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "error_state.h"
#include "kiln/base/hex.h"

namespace kiln::sim::runtime {
namespace {

constexpr size_t kPageBytes = 4096;

}  // namespace

cudaError_t allocate_host(RuntimeState& state, const char* api, void** pointer, size_t bytes,
                          unsigned flags) {
  if (pointer == nullptr) return fail(cudaErrorInvalidValue, std::string(api) + ": null pointer");
  *pointer = nullptr;
  constexpr unsigned kKnown =
      cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined;
  if ((flags & ~kKnown) != 0)
    return fail(cudaErrorInvalidValue, std::string(api) + ": unknown flags " +
                                           std::to_string(flags) +
                                           "; use cudaHostAllocDefault, Portable, Mapped or "
                                           "WriteCombined");
  // Page-aligned as pinned memory is; at least one page, so every allocation has an address.
  const size_t stored = (bytes + kPageBytes - 1) / kPageBytes * kPageBytes;
  void* memory = std::aligned_alloc(kPageBytes, stored == 0 ? kPageBytes : stored);
  if (memory == nullptr)
    return fail(cudaErrorMemoryAllocation,
                std::string(api) + ": no host memory for " + std::to_string(bytes) + " bytes");
  state.host_allocations[reinterpret_cast<uintptr_t>(memory)] = HostAllocation{memory, bytes, 0};
  *pointer = memory;
  return cudaSuccess;
}

cudaError_t free_host(RuntimeState& state, void* pointer) {
  if (pointer == nullptr) return cudaSuccess;
  auto it = state.host_allocations.find(reinterpret_cast<uintptr_t>(pointer));
  if (it == state.host_allocations.end())
    return fail(cudaErrorInvalidValue,
                "cudaFreeHost(" + hex(reinterpret_cast<uintptr_t>(pointer)) +
                    "): not a pointer cudaMallocHost or cudaHostAlloc returned (freed twice, a "
                    "pointer into an allocation, or other memory)");
  if (const uint64_t device = it->second.device_address; device != 0) {
    state.mapped_ranges.erase(device);
    (void)state.device().free(device);  // only the mapping goes; the bytes are freed below
  }
  state.host_allocations.erase(it);
  std::free(pointer);
  return cudaSuccess;
}

HostAllocation* find_host_allocation(RuntimeState& state, const void* host, uintptr_t* base) {
  const auto address = reinterpret_cast<uintptr_t>(host);
  auto it = state.host_allocations.upper_bound(address);
  if (it == state.host_allocations.begin()) return nullptr;
  --it;
  if (address - it->first >= std::max<size_t>(it->second.bytes, 1)) return nullptr;
  *base = it->first;
  return &it->second;
}

uint64_t map_host_allocation(RuntimeState& state, HostAllocation& allocation) {
  if (allocation.device_address != 0) return allocation.device_address;
  if (allocation.bytes == 0) return 0;
  ExternalBytes bytes{static_cast<uint8_t*>(allocation.host), allocation.bytes, {}};
  auto address = state.device().map_external(std::move(bytes), "mapped host memory");
  if (!address) return 0;
  allocation.device_address = *address;
  state.mapped_ranges[*address] = allocation.bytes;
  return *address;
}

cudaError_t host_device_pointer(RuntimeState& state, void** device, void* host, unsigned flags) {
  if (device == nullptr)
    return fail(cudaErrorInvalidValue, "cudaHostGetDevicePointer: null pDevice");
  *device = nullptr;
  if (flags != 0) return fail(cudaErrorInvalidValue, "cudaHostGetDevicePointer: flags must be 0");
  uintptr_t base = 0;
  HostAllocation* allocation = find_host_allocation(state, host, &base);
  if (allocation == nullptr)
    return fail(cudaErrorInvalidValue,
                "cudaHostGetDevicePointer(" + hex(reinterpret_cast<uintptr_t>(host)) +
                    "): not inside memory from cudaHostAlloc or cudaMallocHost (freed, or "
                    "ordinary host memory; cudaHostRegister is not supported)");
  const uint64_t address = map_host_allocation(state, *allocation);
  if (address == 0)
    return fail(cudaErrorInvalidValue,
                "cudaHostGetDevicePointer: a 0-byte host allocation has no device address");
  *device = pointer_of(address + (reinterpret_cast<uintptr_t>(host) - base));
  return cudaSuccess;
}

}  // namespace kiln::sim::runtime
