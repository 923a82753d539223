#include "device_state.h"

#include "cuda_status.h"

namespace kiln::worker {

Result<DeviceState> DeviceState::capture(cudaStream_t launch_stream) {
  DeviceState state;
  if (auto s =
          cuda_ok(cudaDeviceGetLimit(&state.persisting_l2_bytes_, cudaLimitPersistingL2CacheSize),
                  "reading the persisting-L2 limit");
      !s)
    return s.error();
  if (auto s = cuda_ok(cudaDeviceGetCacheConfig(&state.cache_config_), "reading the cache config");
      !s)
    return s.error();
  cudaStreamAttrValue window{};
  if (auto s = cuda_ok(
          cudaStreamGetAttribute(launch_stream, cudaStreamAttributeAccessPolicyWindow, &window),
          "reading the launch stream's access policy");
      !s)
    return s.error();
  if (window.accessPolicyWindow.num_bytes != 0)
    return make_error("the launch stream has an access-policy window before any candidate ran");
  return state;
}

std::vector<std::string> DeviceState::restore(cudaStream_t launch_stream) const {
  std::vector<std::string> changes;
  size_t persisting = 0;
  if (cudaDeviceGetLimit(&persisting, cudaLimitPersistingL2CacheSize) == cudaSuccess &&
      persisting != persisting_l2_bytes_) {
    changes.push_back("the persisting-L2 carve-out (cudaLimitPersistingL2CacheSize = " +
                      std::to_string(persisting) + " bytes)");
    cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, persisting_l2_bytes_);
  }
  cudaStreamAttrValue window{};
  if (cudaStreamGetAttribute(launch_stream, cudaStreamAttributeAccessPolicyWindow, &window) ==
          cudaSuccess &&
      window.accessPolicyWindow.num_bytes != 0) {
    changes.push_back("the launch stream's access-policy window (" +
                      std::to_string(window.accessPolicyWindow.num_bytes) + " bytes persisting)");
    cudaStreamAttrValue none{};
    cudaStreamSetAttribute(launch_stream, cudaStreamAttributeAccessPolicyWindow, &none);
  }
  cudaFuncCache cache = cache_config_;
  if (cudaDeviceGetCacheConfig(&cache) == cudaSuccess && cache != cache_config_) {
    changes.push_back("the device's L1/shared-memory preference (cudaDeviceSetCacheConfig)");
    cudaDeviceSetCacheConfig(cache_config_);
  }
  // Lines a candidate marked persisting stay so until reset, whatever the limit says now.
  if (!changes.empty()) cudaCtxResetPersistingL2Cache();
  cudaGetLastError();  // a refused query above must not surface as the next call's error
  return changes;
}

}  // namespace kiln::worker
