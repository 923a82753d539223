// Device and function queries: the one simulated device, its properties and attributes,
// cudaFuncSetAttribute/cudaFuncGetAttributes, occupancy, versions and limits.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "device_properties.h"
#include "error_state.h"
#include "launch_validation.h"
#include "runtime_state.h"

namespace rt = kiln::sim::runtime;

namespace kiln::sim::runtime {
namespace {

constexpr int kCudaVersion = 13000;

// The function's record and its KernelInfo, loading the module if needed.
cudaError_t kernel_of(RuntimeState& state, const char* api, const void* func,
                      FunctionRecord** function, KernelInfo* info) {
  *function = state.find_function(func);
  if (*function == nullptr)
    return fail(cudaErrorInvalidDeviceFunction,
                std::string(api) + ": not a registered __global__ function");
  auto module = state.module_handle(*(*function)->module);
  if (!module) return fail(cudaErrorInvalidPtx, module.error().message);
  auto kernel = state.device().kernel(*module, (*function)->device_name);
  if (!kernel) return fail(cudaErrorInvalidDeviceFunction, kernel.error().message);
  *info = std::move(*kernel);
  return cudaSuccess;
}

int round_up(int value, int multiple) { return (value + multiple - 1) / multiple * multiple; }

}  // namespace
}  // namespace kiln::sim::runtime

extern "C" {

cudaError_t cudaGetDeviceCount(int* count) {
  if (count == nullptr) return cudaErrorInvalidValue;
  *count = 1;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  if (device == nullptr) return rt::fail(cudaErrorInvalidValue, "cudaGetDevice: null device");
  *device = state.current_device;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  if (device != 0)
    return rt::fail(cudaErrorInvalidDevice, "cudaSetDevice(" + std::to_string(device) +
                                                "): the simulator has one device, number 0");
  state.current_device = 0;
  return cudaSuccess;
}

cudaError_t cudaInitDevice(int device, unsigned int /*deviceFlags*/, unsigned int /*flags*/) {
  return cudaSetDevice(device);
}

cudaError_t cudaSetDeviceFlags(unsigned int /*flags*/) { return cudaSuccess; }

cudaError_t cudaDeviceReset(void) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  state.flush_printf();
  state.reset_device();
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  if (prop == nullptr) return rt::fail(cudaErrorInvalidValue, "cudaGetDeviceProperties: null");
  if (device != 0)
    return rt::fail(cudaErrorInvalidDevice, "cudaGetDeviceProperties: only device 0 exists");
  rt::fill_device_prop(state.device().properties(), prop);
  return cudaSuccess;
}

// The name CUDA 12 host code links against.
cudaError_t cudaGetDeviceProperties_v2(cudaDeviceProp* prop, int device) {
  return cudaGetDeviceProperties(prop, device);
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  if (value == nullptr) return rt::fail(cudaErrorInvalidValue, "cudaDeviceGetAttribute: null");
  if (device != 0)
    return rt::fail(cudaErrorInvalidDevice, "cudaDeviceGetAttribute: only device 0 exists");
  const auto found = rt::device_attribute(state.device().properties(), attr);
  if (!found) {
    // Not modelled: answer 0 as a device without the feature would, and say so.
    state.add_diagnostic("cudaDeviceGetAttribute: attribute " +
                         std::to_string(static_cast<int>(attr)) +
                         " is not modelled by the simulator; returned 0");
    *value = 0;
    return cudaSuccess;
  }
  *value = *found;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetLimit(size_t* pValue, cudaLimit limit) {
  if (pValue == nullptr) return cudaErrorInvalidValue;
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  switch (limit) {
    case cudaLimitStackSize:
      *pValue = 1024;
      break;
    case cudaLimitPrintfFifoSize:
      *pValue = state.printf_fifo_bytes;
      break;
    case cudaLimitMallocHeapSize:
      *pValue = 8 << 20;
      break;
    case cudaLimitPersistingL2CacheSize:
      *pValue = state.persisting_l2_bytes.value_or(
          rt::persisting_l2_default_bytes(state.device().properties()));
      break;
    default:
      *pValue = 0;
      break;
  }
  return cudaSuccess;
}

// The printf FIFO size changes what the simulator does; the persisting-L2 size is kept and
// read back as an H200 keeps it (device_properties.h); other limits are accepted.
cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  if (limit == cudaLimitPrintfFifoSize) state.printf_fifo_bytes = value;
  if (limit == cudaLimitPersistingL2CacheSize) {
    const auto& device = state.device().properties();
    const uint64_t max = rt::persisting_l2_max_bytes(device);
    if (value > max)
      return rt::fail(cudaErrorInvalidValue, "cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, " +
                                                 std::to_string(value) +
                                                 "): above persistingL2CacheMaxSize (" +
                                                 std::to_string(max) + " bytes)");
    const uint64_t step = rt::persisting_l2_step_bytes(device);
    state.persisting_l2_bytes = static_cast<size_t>((value + step - 1) / step * step);
  }
  return cudaSuccess;
}

cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache cacheConfig) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  if (cacheConfig < cudaFuncCachePreferNone || cacheConfig > cudaFuncCachePreferEqual)
    return rt::fail(cudaErrorInvalidValue,
                    "cudaDeviceSetCacheConfig: " + std::to_string(static_cast<int>(cacheConfig)) +
                        " is not a cudaFuncCache");
  state.cache_config = cacheConfig;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetCacheConfig(cudaFuncCache* pCacheConfig) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  if (pCacheConfig == nullptr)
    return rt::fail(cudaErrorInvalidValue, "cudaDeviceGetCacheConfig: null pCacheConfig");
  *pCacheConfig = state.cache_config;
  return cudaSuccess;
}

// No L2 is modelled, so no line is persisting: nothing to reset.
cudaError_t cudaCtxResetPersistingL2Cache(void) { return cudaSuccess; }

// The simulated device's PCI address, "0000:00:00.0". A buffer shorter than its 13 bytes gets
// as much as fits and cudaErrorInvalidValue, as from the real runtime.
cudaError_t cudaDeviceGetPCIBusId(char* pciBusId, int len, int device) {
  constexpr const char* kBusId = "0000:00:00.0";
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  if (pciBusId == nullptr || len <= 0)
    return rt::fail(cudaErrorInvalidValue, "cudaDeviceGetPCIBusId: null pciBusId or len <= 0");
  if (device != 0)
    return rt::fail(cudaErrorInvalidDevice, "cudaDeviceGetPCIBusId(" + std::to_string(device) +
                                                "): the simulator has one device, number 0");
  std::snprintf(pciBusId, static_cast<size_t>(len), "%s", kBusId);
  if (static_cast<size_t>(len) <= std::strlen(kBusId))
    return rt::fail(cudaErrorInvalidValue, "cudaDeviceGetPCIBusId: len " + std::to_string(len) +
                                               " is too short; pass a buffer of 13 bytes");
  return cudaSuccess;
}

cudaError_t cudaFuncSetCacheConfig(const void* /*func*/, cudaFuncCache /*cacheConfig*/) {
  return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int* driverVersion) {
  if (driverVersion == nullptr) return cudaErrorInvalidValue;
  *driverVersion = rt::kCudaVersion;
  return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int* runtimeVersion) {
  if (runtimeVersion == nullptr) return cudaErrorInvalidValue;
  *runtimeVersion = rt::kCudaVersion;
  return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  rt::FunctionRecord* function = nullptr;
  kiln::sim::KernelInfo info;
  if (cudaError_t error = rt::kernel_of(state, "cudaFuncSetAttribute", func, &function, &info);
      error != cudaSuccess)
    return error;
  const auto& device = state.device().properties();
  switch (attr) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize: {
      const uint32_t optin = rt::optin_max_dynamic_shared(device, info);
      if (value < 0 || static_cast<uint32_t>(value) > optin)
        return rt::fail(cudaErrorInvalidValue,
                        "cudaFuncSetAttribute(" + info.name + ", MaxDynamicSharedMemorySize, " +
                            std::to_string(value) + "): the kernel has " +
                            std::to_string(info.static_shared_bytes) +
                            " bytes of static shared memory, so at most " + std::to_string(optin) +
                            " bytes of dynamic shared memory fit in the " +
                            std::to_string(device.shared_memory_per_block_optin) +
                            "-byte opt-in limit per block");
      function->max_dynamic_shared = static_cast<uint32_t>(value);
      return cudaSuccess;
    }
    case cudaFuncAttributePreferredSharedMemoryCarveout:
      if (value < -1 || value > 100)
        return rt::fail(cudaErrorInvalidValue,
                        "cudaFuncSetAttribute(PreferredSharedMemoryCarveout): " +
                            std::to_string(value) + " is not a percentage (-1 for the default)");
      function->preferred_carveout = value;
      return cudaSuccess;
    case cudaFuncAttributeNonPortableClusterSizeAllowed:
      function->non_portable_cluster = value != 0;
      return cudaSuccess;
    case cudaFuncAttributeRequiredClusterWidth:
      function->required_cluster.x = static_cast<uint32_t>(value);
      return cudaSuccess;
    case cudaFuncAttributeRequiredClusterHeight:
      function->required_cluster.y = static_cast<uint32_t>(value);
      return cudaSuccess;
    case cudaFuncAttributeRequiredClusterDepth:
      function->required_cluster.z = static_cast<uint32_t>(value);
      return cudaSuccess;
    case cudaFuncAttributeClusterDimMustBeSet:
    case cudaFuncAttributeClusterSchedulingPolicyPreference:
      return cudaSuccess;
    default:
      return rt::fail(cudaErrorInvalidValue, "cudaFuncSetAttribute: attribute " +
                                                 std::to_string(static_cast<int>(attr)) +
                                                 " cannot be set (or is not a cudaFuncAttribute)");
  }
}

cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  if (attr == nullptr) return rt::fail(cudaErrorInvalidValue, "cudaFuncGetAttributes: null");
  rt::FunctionRecord* function = nullptr;
  kiln::sim::KernelInfo info;
  if (cudaError_t error = rt::kernel_of(state, "cudaFuncGetAttributes", func, &function, &info);
      error != cudaSuccess)
    return error;
  const auto& device = state.device().properties();
  *attr = cudaFuncAttributes{};
  attr->sharedSizeBytes = info.static_shared_bytes;
  attr->maxThreadsPerBlock = static_cast<int>(
      info.max_threads != 0 ? std::min(info.max_threads, device.max_threads_per_block)
                            : device.max_threads_per_block);
  attr->numRegs = 0;  // the simulator runs PTX; registers are allocated by ptxas, not here
  attr->ptxVersion = device.major * 10 + device.minor;
  attr->binaryVersion = attr->ptxVersion;
  attr->maxDynamicSharedSizeBytes = static_cast<int>(
      function->max_dynamic_shared.value_or(rt::default_max_dynamic_shared(device, info)));
  attr->preferredShmemCarveout = function->preferred_carveout;
  attr->requiredClusterWidth = static_cast<int>(info.cluster.x);
  attr->requiredClusterHeight = static_cast<int>(info.cluster.y);
  attr->requiredClusterDepth = static_cast<int>(info.cluster.z);
  attr->nonPortableClusterSizeAllowed = function->non_portable_cluster ? 1 : 0;
  return cudaSuccess;
}

// Limited by threads, blocks and shared memory per SM; registers are not known before ptxas,
// so they are not counted (README.md).
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, const void* func,
                                                                   int blockSize,
                                                                   size_t dynamicSMemSize,
                                                                   unsigned int /*flags*/) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  if (numBlocks == nullptr)
    return rt::fail(cudaErrorInvalidValue, "cudaOccupancyMaxActiveBlocksPerMultiprocessor: null");
  rt::FunctionRecord* function = nullptr;
  kiln::sim::KernelInfo info;
  if (cudaError_t error = rt::kernel_of(state, "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
                                        func, &function, &info);
      error != cudaSuccess)
    return error;
  const auto& device = state.device().properties();
  const int max_threads =
      static_cast<int>(info.max_threads != 0 ? info.max_threads : device.max_threads_per_block);
  if (blockSize <= 0 || blockSize > max_threads) {
    *numBlocks = 0;
    return cudaSuccess;
  }
  const int warp = static_cast<int>(device.warp_size);
  int blocks = std::min(
      rt::kMaxBlocksPerMultiprocessor,
      static_cast<int>(device.max_threads_per_multiprocessor) / rt::round_up(blockSize, warp));
  const size_t shared = info.static_shared_bytes + dynamicSMemSize;
  if (shared > device.shared_memory_per_block_optin) {
    *numBlocks = 0;
    return cudaSuccess;
  }
  if (shared > 0) {
    const size_t per_block = shared + rt::kReservedSharedPerBlock;
    blocks =
        std::min(blocks, static_cast<int>(device.shared_memory_per_multiprocessor / per_block));
  }
  *numBlocks = blocks;
  return cudaSuccess;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* func,
                                                          int blockSize, size_t dynamicSMemSize) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize,
                                                                dynamicSMemSize, 0);
}

}  // extern "C"
