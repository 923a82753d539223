#include "device_info.h"

#include <cuda_runtime_api.h>

#include "cuda_status.h"

namespace kiln::worker {

namespace {

std::string version_string(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

}  // namespace

Result<GpuInfo> open_device(int index) {
  int count = 0;
  const cudaError_t counted = cudaGetDeviceCount(&count);
  if (counted != cudaSuccess || count == 0) {
    return make_error(
        "no CUDA GPU is usable here (" +
        std::string(counted != cudaSuccess ? cudaGetErrorString(counted) : "0 devices") +
        "); run the job on a machine with a GPU");
  }
  if (index < 0 || index >= count) {
    return make_error("GPU " + std::to_string(index) + " does not exist (" + std::to_string(count) +
                      " visible)");
  }
  if (auto s = cuda_ok(cudaSetDevice(index), "cudaSetDevice"); !s) return s.error();
  cudaDeviceProp prop{};
  if (auto s = cuda_ok(cudaGetDeviceProperties(&prop, index), "cudaGetDeviceProperties"); !s)
    return s.error();
  GpuInfo info;
  info.name = prop.name;
  info.index = index;
  info.sm_count = prop.multiProcessorCount;
  info.l2_bytes = prop.l2CacheSize;
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, index) == cudaSuccess) info.pci_bus_id = bus;
  int driver = 0;
  int runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  info.cuda = version_string(runtime);
  info.driver = "CUDA " + version_string(driver);
  return info;
}

}  // namespace kiln::worker
