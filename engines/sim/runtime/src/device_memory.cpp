#include "device_memory.h"

#include <cstdio>
#include <cstring>
#include <string>

#include "error_state.h"
#include "kiln/base/hex.h"

namespace kiln::sim::runtime {
namespace {

const char* kind_name(cudaMemcpyKind kind) {
  switch (kind) {
    case cudaMemcpyHostToHost:
      return "cudaMemcpyHostToHost";
    case cudaMemcpyHostToDevice:
      return "cudaMemcpyHostToDevice";
    case cudaMemcpyDeviceToHost:
      return "cudaMemcpyDeviceToHost";
    case cudaMemcpyDeviceToDevice:
      return "cudaMemcpyDeviceToDevice";
    case cudaMemcpyDefault:
      return "cudaMemcpyDefault";
  }
  return "an unknown cudaMemcpyKind";
}

// Checks that [address, address+bytes) lies in device memory; the message says where it fell.
cudaError_t check_device_range(RuntimeState& state, const std::string& what, uint64_t address,
                               size_t bytes) {
  if (state.device_range(address, bytes)) return cudaSuccess;
  std::string detail = what + " [" + hex(address) + ", +" + std::to_string(bytes) + ")";
  auto it = state.allocations.upper_bound(address);
  if (it != state.allocations.begin()) {
    --it;
    if (address - it->first < it->second)
      return fail(cudaErrorInvalidValue,
                  detail + " overruns the allocation at " + hex(it->first) + " of " +
                      std::to_string(it->second) + " bytes by " +
                      std::to_string(address - it->first + bytes - it->second) + " bytes");
  }
  return fail(cudaErrorInvalidValue,
              detail +
                  " is not inside any cudaMalloc allocation (freed, never allocated, or a "
                  "host pointer); check the pointer and the copy kind");
}

cudaError_t check_host_pointer(RuntimeState& state, const std::string& what, const void* pointer,
                               cudaMemcpyKind kind) {
  if (pointer == nullptr) return fail(cudaErrorInvalidValue, what + " is a null pointer");
  if (state.is_device_address(address_of(pointer)))
    return fail(cudaErrorInvalidValue,
                what + " " + hex(address_of(pointer)) + " is device memory but the copy kind is " +
                    kind_name(kind) + "; use the right kind or cudaMemcpyDefault");
  return cudaSuccess;
}

cudaError_t device_status(const char* api, const Status& status) {
  if (status.ok()) return cudaSuccess;
  return fail(cudaErrorInvalidValue, std::string(api) + ": " + status.error().message);
}

}  // namespace

cudaError_t copy_memory(RuntimeState& state, const char* api, void* destination, const void* source,
                        size_t bytes, cudaMemcpyKind kind) {
  if (const cudaError_t sticky = sticky_error(); sticky != cudaSuccess)
    return fail(sticky, std::string(api) + " refused: an earlier launch faulted");
  if (bytes == 0) return cudaSuccess;
  const uint64_t dst = address_of(destination);
  const uint64_t src = address_of(source);
  bool dst_device = false, src_device = false;
  switch (kind) {
    case cudaMemcpyHostToHost:
      break;
    case cudaMemcpyHostToDevice:
      dst_device = true;
      break;
    case cudaMemcpyDeviceToHost:
      src_device = true;
      break;
    case cudaMemcpyDeviceToDevice:
      dst_device = src_device = true;
      break;
    case cudaMemcpyDefault:
      dst_device = state.is_device_address(dst);
      src_device = state.is_device_address(src);
      break;
    default:
      return fail(cudaErrorInvalidMemcpyDirection, std::string(api) + ": copy kind " +
                                                       std::to_string(static_cast<int>(kind)) +
                                                       " is not a cudaMemcpyKind");
  }
  const std::string prefix = std::string(api) + "(" + kind_name(kind) + "): ";
  cudaError_t error = dst_device
                          ? check_device_range(state, prefix + "destination", dst, bytes)
                          : check_host_pointer(state, prefix + "destination", destination, kind);
  if (error != cudaSuccess) return error;
  error = src_device ? check_device_range(state, prefix + "source", src, bytes)
                     : check_host_pointer(state, prefix + "source", source, kind);
  if (error != cudaSuccess) return error;

  ++state.clock;
  if (!dst_device && !src_device) {
    std::memmove(destination, source, bytes);
    return cudaSuccess;
  }
  Device& device = state.device();
  if (dst_device && src_device) return device_status(api, device.copy_on_device(dst, src, bytes));
  if (dst_device) return device_status(api, device.copy_to_device(dst, source, bytes));
  return device_status(api, device.copy_to_host(destination, src, bytes));
}

cudaError_t copy_memory_2d(RuntimeState& state, const char* api, void* destination,
                           size_t destination_pitch, const void* source, size_t source_pitch,
                           size_t width, size_t height, cudaMemcpyKind kind) {
  if (width > destination_pitch || width > source_pitch)
    return fail(cudaErrorInvalidPitchValue, std::string(api) + ": width " + std::to_string(width) +
                                                " bytes exceeds a pitch (destination " +
                                                std::to_string(destination_pitch) + ", source " +
                                                std::to_string(source_pitch) + ")");
  for (size_t row = 0; row < height; ++row) {
    auto* dst = static_cast<char*>(destination) + row * destination_pitch;
    const auto* src = static_cast<const char*>(source) + row * source_pitch;
    const cudaError_t error = copy_memory(state, api, dst, src, width, kind);
    if (error != cudaSuccess) return error;
  }
  return cudaSuccess;
}

cudaError_t fill_memory(RuntimeState& state, const char* api, void* destination, int value,
                        size_t bytes) {
  if (const cudaError_t sticky = sticky_error(); sticky != cudaSuccess)
    return fail(sticky, std::string(api) + " refused: an earlier launch faulted");
  if (bytes == 0) return cudaSuccess;
  const uint64_t dst = address_of(destination);
  const cudaError_t error =
      check_device_range(state, std::string(api) + ": destination", dst, bytes);
  if (error != cudaSuccess) return error;
  ++state.clock;
  return device_status(api, state.device().fill(dst, static_cast<uint8_t>(value), bytes));
}

cudaError_t fill_memory_2d(RuntimeState& state, const char* api, void* destination, size_t pitch,
                           int value, size_t width, size_t height) {
  if (width > pitch && height > 1)
    return fail(cudaErrorInvalidPitchValue, std::string(api) + ": width " + std::to_string(width) +
                                                " exceeds pitch " + std::to_string(pitch));
  for (size_t row = 0; row < height; ++row) {
    const cudaError_t error =
        fill_memory(state, api, static_cast<char*>(destination) + row * pitch, value, width);
    if (error != cudaSuccess) return error;
  }
  return cudaSuccess;
}

cudaError_t allocate_memory(RuntimeState& state, const char* api, void** pointer, size_t bytes) {
  if (pointer == nullptr) return fail(cudaErrorInvalidValue, std::string(api) + ": null devPtr");
  *pointer = nullptr;
  if (const cudaError_t sticky = sticky_error(); sticky != cudaSuccess)
    return fail(sticky, std::string(api) + " refused: an earlier launch faulted");
  if (bytes == 0) return cudaSuccess;
  auto address = state.device().allocate(bytes);
  if (!address)
    return fail(cudaErrorMemoryAllocation, std::string(api) + "(" + std::to_string(bytes) +
                                               " bytes): " + address.error().message);
  state.allocations[*address] = bytes;
  *pointer = pointer_of(*address);
  return cudaSuccess;
}

cudaError_t free_memory(RuntimeState& state, const char* api, void* pointer) {
  if (pointer == nullptr) return cudaSuccess;
  const uint64_t address = address_of(pointer);
  if (state.ipc_imports.contains(address))
    return fail(cudaErrorInvalidValue, std::string(api) + "(" + hex(address) +
                                           "): memory opened with cudaIpcOpenMemHandle; release "
                                           "it with cudaIpcCloseMemHandle");
  if (state.mapped_ranges.contains(address))
    return fail(cudaErrorInvalidValue, std::string(api) + "(" + hex(address) +
                                           "): the device alias of pinned host memory; free the "
                                           "host pointer with cudaFreeHost");
  auto it = state.allocations.find(address);
  if (it == state.allocations.end())
    return fail(cudaErrorInvalidValue,
                std::string(api) + "(" + hex(address) +
                    "): not an address cudaMalloc returned (freed twice, a pointer into the "
                    "middle of an allocation, or a host pointer)");
  state.allocations.erase(it);
  state.ipc_exports.erase(address);  // freeing it below unlinks its shared-memory object
  state.pool_allocations.erase(address);
  return device_status(api, state.device().free(address));
}

cudaError_t symbol_range(RuntimeState& state, const char* api, const void* symbol,
                         uint64_t* address, size_t* bytes) {
  VariableRecord* variable = state.find_variable(symbol);
  if (variable == nullptr)
    return fail(cudaErrorInvalidSymbol,
                std::string(api) +
                    ": the symbol is not a registered __device__ or "
                    "__constant__ variable; pass the variable itself "
                    "(cudaMemcpyToSymbol(var, ...)), not its name or address");
  auto module = state.module_handle(*variable->module);
  if (!module) return fail(cudaErrorInvalidPtx, module.error().message);
  auto found = state.device().symbol_address(*module, variable->device_name);
  if (!found) return fail(cudaErrorInvalidSymbol, std::string(api) + ": " + found.error().message);
  state.symbol_ranges[*found] = variable->bytes;
  *address = *found;
  *bytes = variable->bytes;
  return cudaSuccess;
}

}  // namespace kiln::sim::runtime
