// Memory entry points: allocation, copies, fills, symbol access (device_memory.h does the work)
// and pinned host memory (host_memory.h). Asynchronous forms complete before returning; their
// stream is only validated.
#include <cuda_runtime_api.h>

#include <mutex>
#include <string>

#include "device_memory.h"
#include "error_state.h"
#include "host_memory.h"
#include "runtime_state.h"

namespace rt = kiln::sim::runtime;

namespace kiln::sim::runtime {
namespace {

// Runs `body` under the state's lock after checking `stream`.
template <typename Body>
cudaError_t on_stream(const char* api, cudaStream_t stream, Body body) {
  auto& state = RuntimeState::get();
  std::lock_guard lock(state.mutex);
  if (!state.is_valid_stream(stream))
    return fail(cudaErrorInvalidResourceHandle,
                std::string(api) + ": the stream does not exist (destroyed or never created)");
  return body(state);
}

// A blocking copy waits for the device, and CUDA prints the kernels' printf output then.
cudaError_t flush_printf_after(cudaError_t error) {
  auto& state = RuntimeState::get();
  std::lock_guard lock(state.mutex);
  state.flush_printf();
  return error;
}

cudaError_t memcpy_any(const char* api, void* dst, const void* src, size_t count,
                       cudaMemcpyKind kind, cudaStream_t stream) {
  return on_stream(api, stream, [&](RuntimeState& state) {
    return copy_memory(state, api, dst, src, count, kind);
  });
}

cudaError_t memset_any(const char* api, void* dst, int value, size_t count, cudaStream_t stream) {
  return on_stream(api, stream,
                   [&](RuntimeState& state) { return fill_memory(state, api, dst, value, count); });
}

cudaError_t memset_2d_any(const char* api, void* dst, size_t pitch, int value, size_t width,
                          size_t height, cudaStream_t stream) {
  return on_stream(api, stream, [&](RuntimeState& state) {
    return fill_memory_2d(state, api, dst, pitch, value, width, height);
  });
}

cudaError_t memcpy_2d_any(const char* api, void* dst, size_t dpitch, const void* src, size_t spitch,
                          size_t width, size_t height, cudaMemcpyKind kind, cudaStream_t stream) {
  return on_stream(api, stream, [&](RuntimeState& state) {
    return copy_memory_2d(state, api, dst, dpitch, src, spitch, width, height, kind);
  });
}

// To and from a __device__/__constant__ variable; `to_symbol` picks the direction.
cudaError_t symbol_copy(const char* api, const void* symbol, void* host, size_t count,
                        size_t offset, cudaMemcpyKind kind, bool to_symbol, cudaStream_t stream) {
  return on_stream(api, stream, [&](RuntimeState& state) {
    uint64_t address = 0;
    size_t bytes = 0;
    cudaError_t error = symbol_range(state, api, symbol, &address, &bytes);
    if (error != cudaSuccess) return error;
    if (offset > bytes || count > bytes - offset)
      return fail(cudaErrorInvalidValue, std::string(api) + ": " + std::to_string(count) +
                                             " bytes at offset " + std::to_string(offset) +
                                             " overrun the " + std::to_string(bytes) +
                                             "-byte variable");
    const cudaMemcpyKind host_kind = to_symbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    if (kind != host_kind && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
      return fail(cudaErrorInvalidMemcpyDirection,
                  std::string(api) + ": kind must be " +
                      (to_symbol ? "HostToDevice" : "DeviceToHost") +
                      ", DeviceToDevice or Default");
    void* symbol_pointer = pointer_of(address + offset);
    return to_symbol ? copy_memory(state, api, symbol_pointer, host, count, kind)
                     : copy_memory(state, api, host, symbol_pointer, count, kind);
  });
}

}  // namespace
}  // namespace kiln::sim::runtime

extern "C" {

cudaError_t cudaMalloc(void** devPtr, size_t size) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  return rt::allocate_memory(state, "cudaMalloc", devPtr, size);
}

cudaError_t cudaFree(void* devPtr) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  return rt::free_memory(state, "cudaFree", devPtr);
}

cudaError_t cudaMallocAsync(void** devPtr, size_t size, cudaStream_t hStream) {
  return rt::on_stream("cudaMallocAsync", hStream, [&](rt::RuntimeState& state) {
    const cudaError_t error = rt::allocate_memory(state, "cudaMallocAsync", devPtr, size);
    if (error == cudaSuccess && *devPtr != nullptr)
      state.pool_allocations.insert(rt::address_of(*devPtr));
    return error;
  });
}

cudaError_t cudaMallocAsync_ptsz(void** devPtr, size_t size, cudaStream_t hStream) {
  return cudaMallocAsync(devPtr, size, hStream);
}

cudaError_t cudaFreeAsync(void* devPtr, cudaStream_t hStream) {
  return rt::on_stream("cudaFreeAsync", hStream, [&](rt::RuntimeState& state) {
    return rt::free_memory(state, "cudaFreeAsync", devPtr);
  });
}

cudaError_t cudaFreeAsync_ptsz(void* devPtr, cudaStream_t hStream) {
  return cudaFreeAsync(devPtr, hStream);
}

// Pinned host memory is ordinary host memory that the device can map (host_memory.h).
cudaError_t cudaMallocHost(void** ptr, size_t size) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  return rt::allocate_host(state, "cudaMallocHost", ptr, size, 0);
}

cudaError_t cudaHostAlloc(void** pHost, size_t size, unsigned int flags) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  return rt::allocate_host(state, "cudaHostAlloc", pHost, size, flags);
}

cudaError_t cudaFreeHost(void* ptr) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  return rt::free_host(state, ptr);
}

cudaError_t cudaHostGetDevicePointer(void** pDevice, void* pHost, unsigned int flags) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  return rt::host_device_pointer(state, pDevice, pHost, flags);
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  return rt::flush_printf_after(rt::memcpy_any("cudaMemcpy", dst, src, count, kind, nullptr));
}

cudaError_t cudaMemcpy_ptds(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  return rt::flush_printf_after(rt::memcpy_any("cudaMemcpy", dst, src, count, kind, nullptr));
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream) {
  return rt::memcpy_any("cudaMemcpyAsync", dst, src, count, kind, stream);
}

cudaError_t cudaMemcpyAsync_ptsz(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                                 cudaStream_t stream) {
  return rt::memcpy_any("cudaMemcpyAsync", dst, src, count, kind, stream);
}

cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                         size_t height, cudaMemcpyKind kind) {
  return rt::flush_printf_after(
      rt::memcpy_2d_any("cudaMemcpy2D", dst, dpitch, src, spitch, width, height, kind, nullptr));
}

cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch,
                              size_t width, size_t height, cudaMemcpyKind kind,
                              cudaStream_t stream) {
  return rt::memcpy_2d_any("cudaMemcpy2DAsync", dst, dpitch, src, spitch, width, height, kind,
                           stream);
}

cudaError_t cudaMemset(void* devPtr, int value, size_t count) {
  return rt::memset_any("cudaMemset", devPtr, value, count, nullptr);
}

cudaError_t cudaMemset_ptds(void* devPtr, int value, size_t count) {
  return rt::memset_any("cudaMemset", devPtr, value, count, nullptr);
}

cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream) {
  return rt::memset_any("cudaMemsetAsync", devPtr, value, count, stream);
}

cudaError_t cudaMemsetAsync_ptsz(void* devPtr, int value, size_t count, cudaStream_t stream) {
  return rt::memset_any("cudaMemsetAsync", devPtr, value, count, stream);
}

cudaError_t cudaMemset2D(void* devPtr, size_t pitch, int value, size_t width, size_t height) {
  return rt::memset_2d_any("cudaMemset2D", devPtr, pitch, value, width, height, nullptr);
}

cudaError_t cudaMemset2DAsync(void* devPtr, size_t pitch, int value, size_t width, size_t height,
                              cudaStream_t stream) {
  return rt::memset_2d_any("cudaMemset2DAsync", devPtr, pitch, value, width, height, stream);
}

cudaError_t cudaMemset2DAsync_ptsz(void* devPtr, size_t pitch, int value, size_t width,
                                   size_t height, cudaStream_t stream) {
  return rt::memset_2d_any("cudaMemset2DAsync", devPtr, pitch, value, width, height, stream);
}

cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src, size_t count, size_t offset,
                               cudaMemcpyKind kind) {
  return rt::flush_printf_after(rt::symbol_copy(
      "cudaMemcpyToSymbol", symbol, const_cast<void*>(src), count, offset, kind, true, nullptr));
}

cudaError_t cudaMemcpyToSymbolAsync(const void* symbol, const void* src, size_t count,
                                    size_t offset, cudaMemcpyKind kind, cudaStream_t stream) {
  return rt::symbol_copy("cudaMemcpyToSymbolAsync", symbol, const_cast<void*>(src), count, offset,
                         kind, true, stream);
}

cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t count, size_t offset,
                                 cudaMemcpyKind kind) {
  return rt::flush_printf_after(
      rt::symbol_copy("cudaMemcpyFromSymbol", symbol, dst, count, offset, kind, false, nullptr));
}

cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t count, size_t offset,
                                      cudaMemcpyKind kind, cudaStream_t stream) {
  return rt::symbol_copy("cudaMemcpyFromSymbolAsync", symbol, dst, count, offset, kind, false,
                         stream);
}

cudaError_t cudaGetSymbolAddress(void** devPtr, const void* symbol) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  if (devPtr == nullptr) return rt::fail(cudaErrorInvalidValue, "cudaGetSymbolAddress: null");
  uint64_t address = 0;
  size_t bytes = 0;
  const cudaError_t error =
      rt::symbol_range(state, "cudaGetSymbolAddress", symbol, &address, &bytes);
  if (error == cudaSuccess) *devPtr = rt::pointer_of(address);
  return error;
}

cudaError_t cudaGetSymbolSize(size_t* size, const void* symbol) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  if (size == nullptr) return rt::fail(cudaErrorInvalidValue, "cudaGetSymbolSize: null");
  rt::VariableRecord* variable = state.find_variable(symbol);
  if (variable == nullptr)
    return rt::fail(cudaErrorInvalidSymbol,
                    "cudaGetSymbolSize: not a registered __device__ or __constant__ variable");
  *size = variable->bytes;
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  const uint64_t capacity = state.device().properties().global_memory_bytes;
  uint64_t used = 0;
  for (const auto& [base, bytes] : state.allocations) used += bytes;
  if (free != nullptr) *free = used >= capacity ? 0 : capacity - used;
  if (total != nullptr) *total = capacity;
  return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  if (attributes == nullptr)
    return rt::fail(cudaErrorInvalidValue, "cudaPointerGetAttributes: null attributes");
  *attributes = cudaPointerAttributes{};
  attributes->device = 0;
  uintptr_t host_base = 0;
  if (rt::HostAllocation* host = rt::find_host_allocation(state, ptr, &host_base)) {
    // Pinned host memory: its device alias (mapped now if it was not yet).
    const uint64_t device = rt::map_host_allocation(state, *host);
    attributes->type = cudaMemoryTypeHost;
    attributes->hostPointer = const_cast<void*>(ptr);
    if (device != 0)
      attributes->devicePointer = rt::pointer_of(device + (rt::address_of(ptr) - host_base));
    return cudaSuccess;
  }
  for (auto& [base, host] : state.host_allocations) {
    const uint64_t offset = rt::address_of(ptr) - host.device_address;
    if (host.device_address == 0 || offset >= host.bytes) continue;
    attributes->type = cudaMemoryTypeHost;  // the device alias of pinned host memory
    attributes->hostPointer = static_cast<char*>(host.host) + offset;
    attributes->devicePointer = const_cast<void*>(ptr);
    return cudaSuccess;
  }
  const bool device = state.is_device_address(rt::address_of(ptr));
  attributes->type = device ? cudaMemoryTypeDevice : cudaMemoryTypeUnregistered;
  attributes->devicePointer = device ? const_cast<void*>(ptr) : nullptr;
  attributes->hostPointer = device ? nullptr : const_cast<void*>(ptr);
  return cudaSuccess;
}

}  // extern "C"
