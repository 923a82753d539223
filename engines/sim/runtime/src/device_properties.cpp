#include "device_properties.h"

#include <algorithm>
#include <cstring>

namespace kiln::sim::runtime {
namespace {

int as_int(uint64_t value) { return static_cast<int>(std::min<uint64_t>(value, INT32_MAX)); }

}  // namespace

void fill_device_prop(const DeviceProperties& device, cudaDeviceProp* prop) {
  *prop = cudaDeviceProp{};
  std::strncpy(prop->name, device.name.c_str(), sizeof prop->name - 1);
  std::memcpy(prop->uuid.bytes, "kiln-sim-device0", sizeof prop->uuid.bytes);
  prop->totalGlobalMem = device.global_memory_bytes;
  prop->sharedMemPerBlock = device.shared_memory_per_block;
  prop->regsPerBlock = as_int(device.registers_per_block);
  prop->warpSize = as_int(device.warp_size);
  prop->memPitch = INT32_MAX;
  prop->maxThreadsPerBlock = as_int(device.max_threads_per_block);
  prop->maxThreadsDim[0] = as_int(device.max_block_dim.x);
  prop->maxThreadsDim[1] = as_int(device.max_block_dim.y);
  prop->maxThreadsDim[2] = as_int(device.max_block_dim.z);
  prop->maxGridSize[0] = as_int(device.max_grid_dim.x);
  prop->maxGridSize[1] = as_int(device.max_grid_dim.y);
  prop->maxGridSize[2] = as_int(device.max_grid_dim.z);
  prop->totalConstMem = kTotalConstantMemory;
  prop->major = device.major;
  prop->minor = device.minor;
  prop->textureAlignment = 512;
  prop->texturePitchAlignment = 32;
  prop->multiProcessorCount = device.multiprocessor_count;
  prop->concurrentKernels = 1;
  prop->asyncEngineCount = 2;
  prop->unifiedAddressing = 1;
  prop->memoryBusWidth = as_int(device.memory_bus_width_bits);
  prop->l2CacheSize = as_int(device.l2_cache_bytes);
  prop->persistingL2CacheMaxSize = as_int(persisting_l2_max_bytes(device));
  prop->accessPolicyMaxWindowSize = kMaxAccessPolicyWindowBytes;
  prop->canMapHostMemory = 1;
  prop->maxThreadsPerMultiProcessor = as_int(device.max_threads_per_multiprocessor);
  prop->streamPrioritiesSupported = 1;
  prop->globalL1CacheSupported = 1;
  prop->localL1CacheSupported = 1;
  prop->sharedMemPerMultiprocessor = device.shared_memory_per_multiprocessor;
  prop->regsPerMultiprocessor = as_int(device.registers_per_block);
  prop->computePreemptionSupported = 1;
  prop->cooperativeLaunch = 1;
  prop->sharedMemPerBlockOptin = device.shared_memory_per_block_optin;
  prop->maxBlocksPerMultiProcessor = kMaxBlocksPerMultiprocessor;
  prop->reservedSharedMemPerBlock = kReservedSharedPerBlock;
  prop->memoryPoolsSupported = 1;
  prop->clusterLaunch = as_int(device.cluster_launch);
}

std::optional<int> device_attribute(const DeviceProperties& device, cudaDeviceAttr attribute) {
  switch (attribute) {
    case cudaDevAttrMaxThreadsPerBlock:
      return as_int(device.max_threads_per_block);
    case cudaDevAttrMaxBlockDimX:
      return as_int(device.max_block_dim.x);
    case cudaDevAttrMaxBlockDimY:
      return as_int(device.max_block_dim.y);
    case cudaDevAttrMaxBlockDimZ:
      return as_int(device.max_block_dim.z);
    case cudaDevAttrMaxGridDimX:
      return as_int(device.max_grid_dim.x);
    case cudaDevAttrMaxGridDimY:
      return as_int(device.max_grid_dim.y);
    case cudaDevAttrMaxGridDimZ:
      return as_int(device.max_grid_dim.z);
    case cudaDevAttrMaxSharedMemoryPerBlock:
      return as_int(device.shared_memory_per_block);
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
      return as_int(device.shared_memory_per_block_optin);
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor:
      return as_int(device.shared_memory_per_multiprocessor);
    case cudaDevAttrReservedSharedMemoryPerBlock:
      return kReservedSharedPerBlock;
    case cudaDevAttrTotalConstantMemory:
      return kTotalConstantMemory;
    case cudaDevAttrWarpSize:
      return as_int(device.warp_size);
    case cudaDevAttrMaxRegistersPerBlock:
    case cudaDevAttrMaxRegistersPerMultiprocessor:
      return as_int(device.registers_per_block);
    case cudaDevAttrClockRate:
      return as_int(device.clock_rate_khz);
    case cudaDevAttrMemoryClockRate:
      return as_int(device.memory_clock_rate_khz);
    case cudaDevAttrGlobalMemoryBusWidth:
      return as_int(device.memory_bus_width_bits);
    case cudaDevAttrMultiProcessorCount:
      return device.multiprocessor_count;
    case cudaDevAttrComputeCapabilityMajor:
      return device.major;
    case cudaDevAttrComputeCapabilityMinor:
      return device.minor;
    case cudaDevAttrMaxThreadsPerMultiProcessor:
      return as_int(device.max_threads_per_multiprocessor);
    case cudaDevAttrMaxBlocksPerMultiprocessor:
      return kMaxBlocksPerMultiprocessor;
    case cudaDevAttrL2CacheSize:
      return as_int(device.l2_cache_bytes);
    case cudaDevAttrMaxPersistingL2CacheSize:
      return as_int(persisting_l2_max_bytes(device));
    case cudaDevAttrMaxAccessPolicyWindowSize:
      return kMaxAccessPolicyWindowBytes;
    case cudaDevAttrClusterLaunch:
      return as_int(device.cluster_launch);
    case cudaDevAttrCooperativeLaunch:
    case cudaDevAttrUnifiedAddressing:
    case cudaDevAttrConcurrentKernels:
    case cudaDevAttrStreamPrioritiesSupported:
    case cudaDevAttrGlobalL1CacheSupported:
    case cudaDevAttrLocalL1CacheSupported:
    case cudaDevAttrMemoryPoolsSupported:
    case cudaDevAttrComputePreemptionSupported:
    case cudaDevAttrCanMapHostMemory:
      return 1;
    case cudaDevAttrAsyncEngineCount:
      return 2;
    case cudaDevAttrComputeMode:  // cudaComputeModeDefault
    case cudaDevAttrIntegrated:
    case cudaDevAttrEccEnabled:
    case cudaDevAttrKernelExecTimeout:
    case cudaDevAttrPciDomainId:
    case cudaDevAttrPciBusId:
    case cudaDevAttrPciDeviceId:
    case cudaDevAttrCanUseHostPointerForRegisteredMem:  // host_memory.h
      return 0;
    default:
      return std::nullopt;
  }
}

}  // namespace kiln::sim::runtime
