// The few CUDA driver API functions candidates use, exported under their driver names and
// reachable through cudaGetDriverEntryPoint(ByVersion): cuTensorMapEncodeTiled (TMA kernels)
// and the driver's error strings. Candidates never link libcuda; this library stands in.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstring>
#include <mutex>
#include <string>

#include "error_state.h"
#include "runtime_state.h"
#include "tensor_map_encode.h"

namespace rt = kiln::sim::runtime;

extern "C" {

CUresult cuTensorMapEncodeTiled(CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType,
                                cuuint32_t tensorRank, void* globalAddress,
                                const cuuint64_t* globalDim, const cuuint64_t* globalStrides,
                                const cuuint32_t* boxDim, const cuuint32_t* elementStrides,
                                CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                CUtensorMapL2promotion l2Promotion,
                                CUtensorMapFloatOOBfill oobFill) {
  rt::TiledTensorMapArgs args;
  args.tensor_map = tensorMap;
  args.data_type = static_cast<uint32_t>(tensorDataType);
  args.rank = tensorRank;
  args.global_address = rt::address_of(globalAddress);
  args.global_dim = globalDim;
  args.global_strides = globalStrides;
  args.box_dim = boxDim;
  args.element_strides = elementStrides;
  args.interleave = static_cast<uint32_t>(interleave);
  args.swizzle = static_cast<uint32_t>(swizzle);
  args.l2_promotion = static_cast<uint32_t>(l2Promotion);
  args.oob_fill = static_cast<uint32_t>(oobFill);
  auto desc = rt::validate_tiled_tensor_map(args);
  if (!desc) {
    auto& state = rt::RuntimeState::get();
    std::lock_guard lock(state.mutex);
    state.add_diagnostic("CUDA_ERROR_INVALID_VALUE: " + desc.error().message);
    return CUDA_ERROR_INVALID_VALUE;
  }
  static_assert(sizeof(CUtensorMap) == kiln::sim::kTensorMapBytes);
  kiln::sim::encode_tensor_map(*desc, tensorMap);
  return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult error, const char** pStr) {
  if (pStr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  switch (error) {
    case CUDA_SUCCESS:
      *pStr = "CUDA_SUCCESS";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_VALUE:
      *pStr = "CUDA_ERROR_INVALID_VALUE";
      return CUDA_SUCCESS;
    default:
      *pStr = nullptr;
      return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult cuGetErrorString(CUresult error, const char** pStr) {
  if (pStr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  switch (error) {
    case CUDA_SUCCESS:
      *pStr = "no error";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_VALUE:
      *pStr = "invalid argument";
      return CUDA_SUCCESS;
    default:
      *pStr = nullptr;
      return CUDA_ERROR_INVALID_VALUE;
  }
}

cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr,
                                             unsigned int cudaVersion, unsigned long long /*flags*/,
                                             cudaDriverEntryPointQueryResult* driverStatus) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  if (symbol == nullptr || funcPtr == nullptr)
    return rt::fail(cudaErrorInvalidValue, "cudaGetDriverEntryPoint: null symbol or funcPtr");
  struct Entry {
    const char* name;
    void* function;
    unsigned since;  // the CUDA version that introduced it
  };
  const Entry entries[] = {
      {"cuTensorMapEncodeTiled", reinterpret_cast<void*>(&cuTensorMapEncodeTiled), 12000},
      {"cuGetErrorName", reinterpret_cast<void*>(&cuGetErrorName), 6000},
      {"cuGetErrorString", reinterpret_cast<void*>(&cuGetErrorString), 6000},
  };
  *funcPtr = nullptr;
  for (const Entry& entry : entries) {
    if (std::strcmp(entry.name, symbol) != 0) continue;
    if (cudaVersion < entry.since) {
      if (driverStatus != nullptr) *driverStatus = cudaDriverEntryPointVersionNotSufficent;
      state.add_diagnostic(std::string("cudaGetDriverEntryPoint: ") + symbol + " needs version " +
                           std::to_string(entry.since) + ", asked for " +
                           std::to_string(cudaVersion));
      return cudaSuccess;
    }
    *funcPtr = entry.function;
    if (driverStatus != nullptr) *driverStatus = cudaDriverEntryPointSuccess;
    return cudaSuccess;
  }
  if (driverStatus != nullptr) *driverStatus = cudaDriverEntryPointSymbolNotFound;
  state.add_diagnostic(std::string("cudaGetDriverEntryPoint: driver function ") + symbol +
                       " is not provided by the simulator (only cuTensorMapEncodeTiled, "
                       "cuGetErrorName and cuGetErrorString are)");
  return cudaSuccess;
}

cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** funcPtr, unsigned long long flags,
                                    cudaDriverEntryPointQueryResult* driverStatus) {
  return cudaGetDriverEntryPointByVersion(symbol, funcPtr, 13000, flags, driverStatus);
}

cudaError_t cudaGetDriverEntryPoint_ptsz(const char* symbol, void** funcPtr,
                                         unsigned long long flags,
                                         cudaDriverEntryPointQueryResult* driverStatus) {
  return cudaGetDriverEntryPointByVersion(symbol, funcPtr, 13000, flags, driverStatus);
}

cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char* symbol, void** funcPtr,
                                                  unsigned int cudaVersion,
                                                  unsigned long long flags,
                                                  cudaDriverEntryPointQueryResult* driverStatus) {
  return cudaGetDriverEntryPointByVersion(symbol, funcPtr, cudaVersion, flags, driverStatus);
}

}  // extern "C"
