// Mapped pinned host memory on the real simulator: cudaHostAlloc then cudaHostGetDevicePointer
// gives a device address whose loads and stores reach the host buffer itself, so a kernel's
// writes are seen by the host at once and the host's by the kernel; cudaFreeHost ends it.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>

namespace {

using Fill = int (*)(int*, int, int);
using Add = int (*)(const int*, int*, int, int);

class MappedHostMemory : public ::testing::Test {
 protected:
  static constexpr int kCount = 300;

  void SetUp() override {
    cudaDeviceReset();
    (void)cudaGetLastError();
    kernels_ = dlopen(KILN_SIMRT_SHARING_KERNELS, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(kernels_, nullptr) << dlerror();
    fill_ = reinterpret_cast<Fill>(dlsym(kernels_, "sharing_fill"));
    add_ = reinterpret_cast<Add>(dlsym(kernels_, "sharing_add"));
    ASSERT_EQ(
        cudaHostAlloc(reinterpret_cast<void**>(&host_), kCount * sizeof(int), cudaHostAllocMapped),
        cudaSuccess);
    ASSERT_EQ(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_), host_, 0), cudaSuccess);
  }
  void TearDown() override {
    if (host_ != nullptr) cudaFreeHost(host_);
    if (kernels_ != nullptr) dlclose(kernels_);
  }

  void* kernels_ = nullptr;
  Fill fill_ = nullptr;
  Add add_ = nullptr;
  int* host_ = nullptr;
  int* device_ = nullptr;
};

TEST_F(MappedHostMemory, KernelWritesThroughTheDevicePointerReachTheHostBuffer) {
  std::memset(host_, 0, kCount * sizeof(int));
  ASSERT_EQ(fill_(device_, kCount, 40), cudaSuccess);
  for (int i = 0; i < kCount; ++i) ASSERT_EQ(host_[i], 40 + i) << i;
}

TEST_F(MappedHostMemory, HostWritesAreWhatTheKernelReads) {
  for (int i = 0; i < kCount; ++i) host_[i] = 2 * i;
  int* out = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&out), kCount * sizeof(int)), cudaSuccess);
  ASSERT_EQ(add_(device_, out, kCount, 1), cudaSuccess);
  int last = 0;
  ASSERT_EQ(cudaMemcpy(&last, out + kCount - 1, sizeof last, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(last, 2 * (kCount - 1) + 1);
  cudaFree(out);
}

TEST_F(MappedHostMemory, PointerInsideTheBufferMapsAtTheSameOffset) {
  int* inside = nullptr;
  ASSERT_EQ(cudaHostGetDevicePointer(reinterpret_cast<void**>(&inside), host_ + 10, 0),
            cudaSuccess);
  EXPECT_EQ(inside, device_ + 10);
  ASSERT_EQ(fill_(inside, 1, 77), cudaSuccess);
  EXPECT_EQ(host_[10], 77);
}

TEST_F(MappedHostMemory, DefaultAllocationsAreMappableToo) {
  int* pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(reinterpret_cast<void**>(&pinned), 64 * sizeof(int)), cudaSuccess);
  int* alias = nullptr;
  ASSERT_EQ(cudaHostGetDevicePointer(reinterpret_cast<void**>(&alias), pinned, 0), cudaSuccess);
  ASSERT_EQ(fill_(alias, 64, 5), cudaSuccess);
  EXPECT_EQ(pinned[63], 68);
  EXPECT_EQ(cudaFreeHost(pinned), cudaSuccess);
}

TEST_F(MappedHostMemory, PointerAttributesNameBothSides) {
  cudaPointerAttributes attributes{};
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, device_), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeHost);
  EXPECT_EQ(attributes.hostPointer, host_);
  EXPECT_EQ(attributes.devicePointer, device_);
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, host_ + 1), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeHost);
  EXPECT_EQ(attributes.devicePointer, device_ + 1);
}

TEST_F(MappedHostMemory, FreeHostEndsTheDeviceAlias) {
  ASSERT_EQ(cudaFreeHost(host_), cudaSuccess);
  int* old_host = host_;
  host_ = nullptr;
  int value = 0;
  EXPECT_EQ(cudaMemcpy(&value, device_, sizeof value, cudaMemcpyDeviceToHost),
            cudaErrorInvalidValue);
  void* alias = nullptr;
  EXPECT_EQ(cudaHostGetDevicePointer(&alias, old_host, 0), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFreeHost(old_host), cudaErrorInvalidValue);  // freed once already
}

TEST_F(MappedHostMemory, DeviceAliasIsNotFreedWithCudaFree) {
  EXPECT_EQ(cudaFree(device_), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFree(host_), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);  // taken, so the launch below is clean
  ASSERT_EQ(fill_(device_, 1, 9), cudaSuccess);          // still mapped
  EXPECT_EQ(host_[0], 9);
}

TEST_F(MappedHostMemory, DeviceResetDropsTheAliasAndALaterCallMapsAgain) {
  host_[0] = 123;
  cudaDeviceReset();
  int* again = nullptr;
  ASSERT_EQ(cudaHostGetDevicePointer(reinterpret_cast<void**>(&again), host_, 0), cudaSuccess);
  int value = 0;
  ASSERT_EQ(cudaMemcpy(&value, again, sizeof value, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(value, 123);
}

TEST_F(MappedHostMemory, BadArgumentsAreRefused) {
  void* alias = nullptr;
  int ordinary = 0;
  EXPECT_EQ(cudaHostGetDevicePointer(&alias, &ordinary, 0), cudaErrorInvalidValue);
  EXPECT_EQ(cudaHostGetDevicePointer(&alias, host_, 1), cudaErrorInvalidValue);
  EXPECT_EQ(cudaHostGetDevicePointer(nullptr, host_, 0), cudaErrorInvalidValue);
  void* pinned = nullptr;
  EXPECT_EQ(cudaHostAlloc(&pinned, 16, 0x80), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFreeHost(&ordinary), cudaErrorInvalidValue);
}

}  // namespace
