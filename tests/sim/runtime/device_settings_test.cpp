// Device and stream settings a program changes and reads back (the worker captures them before
// a candidate runs and restores them after): the persisting-L2 limit, the cache preference,
// stream access-policy windows, synchronization policy and priorities, and the PCI bus id.
// Against the fake device: these are the runtime's records, not the simulator's.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>

#include "fake_device.h"

namespace kiln::sim {
namespace {

class DeviceSettings : public ::testing::Test {
 protected:
  void SetUp() override {
    cudaDeviceReset();
    (void)cudaGetLastError();
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
  }
  void TearDown() override { cudaStreamDestroy(stream_); }

  static size_t persisting_max() {
    cudaDeviceProp prop{};
    EXPECT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
    return static_cast<size_t>(prop.persistingL2CacheMaxSize);
  }

  cudaStream_t stream_ = nullptr;
};

// As an H200 with CUDA 13 answers (measured): 3 tenths of the maximum by default, set in
// tenths rounded up, refused above the maximum, back to the default after a reset.
TEST_F(DeviceSettings, PersistingL2LimitMovesInTenthsOfTheMaximumAsOnAnH200) {
  const size_t max = persisting_max();
  EXPECT_EQ(max, 39321600u);
  const size_t step = max / 10;
  size_t bytes = 1;
  ASSERT_EQ(cudaDeviceGetLimit(&bytes, cudaLimitPersistingL2CacheSize), cudaSuccess);
  EXPECT_EQ(bytes, 3 * step);
  ASSERT_EQ(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 4 << 20), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetLimit(&bytes, cudaLimitPersistingL2CacheSize), cudaSuccess);
  EXPECT_EQ(bytes, 2 * step);  // 4 MiB rounded up to 7.5 MiB
  ASSERT_EQ(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetLimit(&bytes, cudaLimitPersistingL2CacheSize), cudaSuccess);
  EXPECT_EQ(bytes, 0u);
  ASSERT_EQ(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, max), cudaSuccess);
  EXPECT_EQ(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, max + 1), cudaErrorInvalidValue);
  ASSERT_EQ(cudaDeviceGetLimit(&bytes, cudaLimitPersistingL2CacheSize), cudaSuccess);
  EXPECT_EQ(bytes, max);  // the refused value was not kept
  int attribute = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&attribute, cudaDevAttrMaxPersistingL2CacheSize, 0),
            cudaSuccess);
  EXPECT_EQ(static_cast<size_t>(attribute), max);
  cudaDeviceReset();
  ASSERT_EQ(cudaDeviceGetLimit(&bytes, cudaLimitPersistingL2CacheSize), cudaSuccess);
  EXPECT_EQ(bytes, 3 * step);
  EXPECT_EQ(cudaCtxResetPersistingL2Cache(), cudaSuccess);
}

TEST_F(DeviceSettings, CacheConfigIsKeptValidatedAndResetByDeviceReset) {
  cudaFuncCache cache = cudaFuncCachePreferL1;
  ASSERT_EQ(cudaDeviceGetCacheConfig(&cache), cudaSuccess);
  EXPECT_EQ(cache, cudaFuncCachePreferNone);
  ASSERT_EQ(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetCacheConfig(&cache), cudaSuccess);
  EXPECT_EQ(cache, cudaFuncCachePreferShared);
  EXPECT_EQ(cudaDeviceSetCacheConfig(static_cast<cudaFuncCache>(9)), cudaErrorInvalidValue);
  EXPECT_EQ(cudaDeviceGetCacheConfig(nullptr), cudaErrorInvalidValue);
  cudaDeviceReset();
  ASSERT_EQ(cudaDeviceGetCacheConfig(&cache), cudaSuccess);
  EXPECT_EQ(cache, cudaFuncCachePreferNone);
}

TEST_F(DeviceSettings, AccessPolicyWindowIsKeptPerStreamAndClearedWithAnEmptyOne) {
  cudaStreamAttrValue window{};
  ASSERT_EQ(cudaStreamGetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &window),
            cudaSuccess);
  EXPECT_EQ(window.accessPolicyWindow.num_bytes, 0u);
  int dummy = 0;
  cudaStreamAttrValue set{};
  set.accessPolicyWindow.base_ptr = &dummy;
  set.accessPolicyWindow.num_bytes = 1 << 20;
  set.accessPolicyWindow.hitRatio = 0.6f;
  set.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  set.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  ASSERT_EQ(cudaStreamSetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &set),
            cudaSuccess);
  ASSERT_EQ(cudaStreamGetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &window),
            cudaSuccess);
  EXPECT_EQ(window.accessPolicyWindow.base_ptr, &dummy);
  EXPECT_EQ(window.accessPolicyWindow.num_bytes, size_t{1} << 20);
  EXPECT_FLOAT_EQ(window.accessPolicyWindow.hitRatio, 0.6f);
  EXPECT_EQ(window.accessPolicyWindow.hitProp, cudaAccessPropertyPersisting);
  EXPECT_EQ(window.accessPolicyWindow.missProp, cudaAccessPropertyStreaming);

  // Another stream, and the default stream, have their own.
  cudaStreamAttrValue other{};
  ASSERT_EQ(cudaStreamGetAttribute(nullptr, cudaStreamAttributeAccessPolicyWindow, &other),
            cudaSuccess);
  EXPECT_EQ(other.accessPolicyWindow.num_bytes, 0u);

  const cudaStreamAttrValue none{};
  ASSERT_EQ(cudaStreamSetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &none),
            cudaSuccess);
  ASSERT_EQ(cudaStreamGetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &window),
            cudaSuccess);
  EXPECT_EQ(window.accessPolicyWindow.num_bytes, 0u);
}

TEST_F(DeviceSettings, AccessPolicyWindowsTheRuntimeRefuses) {
  cudaStreamAttrValue bad{};
  bad.accessPolicyWindow.num_bytes = 4096;
  bad.accessPolicyWindow.hitRatio = 1.5f;
  EXPECT_EQ(cudaStreamSetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &bad),
            cudaErrorInvalidValue);
  bad.accessPolicyWindow.hitRatio = 0.5f;
  bad.accessPolicyWindow.missProp = cudaAccessPropertyPersisting;
  EXPECT_EQ(cudaStreamSetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &bad),
            cudaErrorInvalidValue);
  bad.accessPolicyWindow.missProp = cudaAccessPropertyNormal;
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  ASSERT_EQ(prop.accessPolicyMaxWindowSize, 128 * 1024 * 1024);
  bad.accessPolicyWindow.num_bytes = static_cast<size_t>(prop.accessPolicyMaxWindowSize) + 1;
  EXPECT_EQ(cudaStreamSetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &bad),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaStreamSetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, nullptr),
            cudaErrorInvalidValue);
  cudaStreamAttrValue window{};
  ASSERT_EQ(cudaStreamGetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &window),
            cudaSuccess);
  EXPECT_EQ(window.accessPolicyWindow.num_bytes, 0u);  // nothing refused was kept
}

TEST_F(DeviceSettings, StreamAttributesOfAStreamThatDoesNotExistAreRefused) {
  cudaStream_t gone = nullptr;
  ASSERT_EQ(cudaStreamCreate(&gone), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(gone), cudaSuccess);
  cudaStreamAttrValue value{};
  EXPECT_EQ(cudaStreamGetAttribute(gone, cudaStreamAttributeAccessPolicyWindow, &value),
            cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaStreamSetAttribute(gone, cudaStreamAttributeAccessPolicyWindow, &value),
            cudaErrorInvalidResourceHandle);
}

TEST_F(DeviceSettings, SynchronizationPolicyAndPriorityAreKept) {
  cudaStreamAttrValue value{};
  ASSERT_EQ(cudaStreamGetAttribute(stream_, cudaStreamAttributeSynchronizationPolicy, &value),
            cudaSuccess);
  EXPECT_EQ(static_cast<int>(value.syncPolicy), -1);  // never set, as an H200 reads it back
  value.syncPolicy = cudaSyncPolicyYield;
  ASSERT_EQ(cudaStreamSetAttribute(stream_, cudaStreamAttributeSynchronizationPolicy, &value),
            cudaSuccess);
  value.syncPolicy = static_cast<cudaSynchronizationPolicy>(0);
  EXPECT_EQ(cudaStreamSetAttribute(stream_, cudaStreamAttributeSynchronizationPolicy, &value),
            cudaErrorInvalidValue);
  ASSERT_EQ(cudaStreamGetAttribute(stream_, cudaStreamAttributeSynchronizationPolicy, &value),
            cudaSuccess);
  EXPECT_EQ(value.syncPolicy, cudaSyncPolicyYield);

  value.priority = -3;
  ASSERT_EQ(cudaStreamSetAttribute(stream_, cudaStreamAttributePriority, &value), cudaSuccess);
  int priority = 0;
  ASSERT_EQ(cudaStreamGetPriority(stream_, &priority), cudaSuccess);
  EXPECT_EQ(priority, -3);
}

TEST_F(DeviceSettings, StreamPrioritiesOutsideTheRangeAreClamped) {
  int least = 1, greatest = 1;
  ASSERT_EQ(cudaDeviceGetStreamPriorityRange(&least, &greatest), cudaSuccess);
  cudaStream_t high = nullptr, low = nullptr;
  ASSERT_EQ(cudaStreamCreateWithPriority(&high, 0, greatest - 10), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithPriority(&low, 0, least + 10), cudaSuccess);
  int priority = 0;
  ASSERT_EQ(cudaStreamGetPriority(high, &priority), cudaSuccess);
  EXPECT_EQ(priority, greatest);
  ASSERT_EQ(cudaStreamGetPriority(low, &priority), cudaSuccess);
  EXPECT_EQ(priority, least);
  cudaStreamAttrValue value{};
  ASSERT_EQ(cudaStreamGetAttribute(high, cudaStreamAttributePriority, &value), cudaSuccess);
  EXPECT_EQ(value.priority, greatest);
  cudaStreamDestroy(high);
  cudaStreamDestroy(low);
}

TEST_F(DeviceSettings, PciBusIdNamesTheOneSimulatedDevice) {
  char bus[32];
  std::memset(bus, 'x', sizeof bus);
  ASSERT_EQ(cudaDeviceGetPCIBusId(bus, sizeof bus, 0), cudaSuccess);
  EXPECT_STREQ(bus, "0000:00:00.0");
  char exact[13];
  ASSERT_EQ(cudaDeviceGetPCIBusId(exact, sizeof exact, 0), cudaSuccess);
  EXPECT_STREQ(exact, "0000:00:00.0");
  char short_bus[5];
  EXPECT_EQ(cudaDeviceGetPCIBusId(short_bus, sizeof short_bus, 0), cudaErrorInvalidValue);
  EXPECT_STREQ(short_bus, "0000");  // what fits, as the real runtime writes it
  EXPECT_EQ(cudaDeviceGetPCIBusId(bus, sizeof bus, 1), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaDeviceGetPCIBusId(nullptr, 13, 0), cudaErrorInvalidValue);
  EXPECT_EQ(cudaDeviceGetPCIBusId(bus, 0, 0), cudaErrorInvalidValue);
}

}  // namespace
}  // namespace kiln::sim
