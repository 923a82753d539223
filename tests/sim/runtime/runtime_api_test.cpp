// The runtime's C API as candidate code uses it: probe_kernels.cu, compiled by nvcc with its
// ordinary host code (<<<>>>, cudaLaunchKernelEx, cudaFuncSetAttribute, symbols, tensor maps),
// loaded with dlopen and bound to this executable's runtime, on the fake device.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "fake_device.h"
#include "kiln/sim/runtime_ext.h"
#include "kiln/sim/tensor_map.h"

namespace kiln::sim {
namespace {

class RuntimeApi : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    probe_ = dlopen(KILN_SIMRT_PROBE, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(probe_, nullptr) << dlerror();
  }

  void SetUp() override {
    ASSERT_NE(probe_, nullptr);
    cudaDeviceReset();
    (void)cudaGetLastError();
    fake::recorded_launches().clear();
    fake::clear_kernel_bodies();
    kiln_sim_clear_report();
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&out_), 4096), cudaSuccess);
  }

  template <typename Fn>
  Fn probe(const char* name) {
    void* symbol = dlsym(probe_, name);
    EXPECT_NE(symbol, nullptr) << name;
    return reinterpret_cast<Fn>(symbol);
  }

  static std::string last_diagnostic() {
    auto report = nlohmann::json::parse(kiln_sim_report());
    return report["diagnostics"].empty() ? "" : report["diagnostics"].back().get<std::string>();
  }

  static inline void* probe_ = nullptr;
  float* out_ = nullptr;
};

TEST_F(RuntimeApi, TripleChevronLaunchPacksEveryArgumentAtItsPtxOffset) {
  auto launch = probe<int (*)(float*)>("probe_launch_scalars");
  ASSERT_EQ(launch(out_), cudaSuccess) << last_diagnostic();
  ASSERT_EQ(fake::recorded_launches().size(), 1u);
  const auto& recorded = fake::recorded_launches()[0];
  EXPECT_NE(recorded.kernel.find("scalars_kernel"), std::string::npos);
  EXPECT_EQ(recorded.config.grid.x, 2u);
  EXPECT_EQ(recorded.config.grid.y, 3u);
  EXPECT_EQ(recorded.config.grid.z, 4u);
  EXPECT_EQ(recorded.config.block.x, 32u);
  EXPECT_EQ(recorded.config.block.y, 2u);
  // (int a, float b, double c, const float* p, Pair{int, double} s, char d)
  const auto& p = recorded.params;
  ASSERT_EQ(p.size(), 41u);
  int a = 0;
  float b = 0;
  double c = 0, sb = 0;
  uint64_t ptr = 0;
  int sa = 0;
  std::memcpy(&a, p.data() + 0, 4);
  std::memcpy(&b, p.data() + 4, 4);
  std::memcpy(&c, p.data() + 8, 8);
  std::memcpy(&ptr, p.data() + 16, 8);
  std::memcpy(&sa, p.data() + 24, 4);
  std::memcpy(&sb, p.data() + 32, 8);
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 2.0f);
  EXPECT_EQ(c, 3.0);
  EXPECT_EQ(ptr, reinterpret_cast<uint64_t>(out_));
  EXPECT_EQ(sa, 7);
  EXPECT_EQ(sb, 2.5);
  EXPECT_EQ(static_cast<char>(p[40]), 'x');
}

TEST_F(RuntimeApi, CudaLaunchKernelWithHostFunctionPointer) {
  auto launch = probe<int (*)(float*)>("probe_launch_kernel_api");
  ASSERT_EQ(launch(out_), cudaSuccess) << last_diagnostic();
  ASSERT_EQ(fake::recorded_launches().size(), 1u);
  EXPECT_EQ(fake::recorded_launches()[0].config.grid.x, 3u);
  EXPECT_NE(fake::recorded_launches()[0].kernel.find("bounded_kernel"), std::string::npos);
}

TEST_F(RuntimeApi, DynamicSharedOver48KBFailsWithoutTheAttribute) {
  auto launch = probe<int (*)(float*, int, int)>("probe_launch_shared");
  EXPECT_EQ(launch(out_, 64 * 1024, 0), cudaErrorInvalidValue);
  EXPECT_NE(last_diagnostic().find("cudaFuncSetAttribute"), std::string::npos);
  EXPECT_TRUE(fake::recorded_launches().empty());
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // the launch's error was taken by the probe
}

TEST_F(RuntimeApi, DynamicSharedOver48KBRunsAfterOptIn) {
  auto launch = probe<int (*)(float*, int, int)>("probe_launch_shared");
  EXPECT_EQ(launch(out_, 64 * 1024, 64 * 1024), cudaSuccess) << last_diagnostic();
  ASSERT_EQ(fake::recorded_launches().size(), 1u);
  EXPECT_EQ(fake::recorded_launches()[0].config.dynamic_shared_bytes, 64u * 1024);
}

TEST_F(RuntimeApi, OptInBeyondTheDeviceMaximumIsRefused) {
  auto launch = probe<int (*)(float*, int, int)>("probe_launch_shared");
  EXPECT_EQ(launch(out_, 1024, 300 * 1024), cudaErrorInvalidValue);
  EXPECT_NE(last_diagnostic().find("opt-in"), std::string::npos);
}

TEST_F(RuntimeApi, BlockOf2048ThreadsIsAnInvalidConfiguration) {
  auto launch = probe<int (*)(float*, int)>("probe_launch_block");
  EXPECT_EQ(launch(out_, 2048), cudaErrorInvalidConfiguration);
  EXPECT_EQ(launch(out_, 1024), cudaSuccess);
}

TEST_F(RuntimeApi, LaunchBoundsAreEnforced) {
  auto launch = probe<int (*)(float*, int)>("probe_launch_bounded");
  EXPECT_EQ(launch(out_, 256), cudaErrorLaunchOutOfResources);
  EXPECT_EQ(launch(out_, 128), cudaSuccess);
}

TEST_F(RuntimeApi, LaunchKernelExPassesTheClusterDimension) {
  auto launch = probe<int (*)(float*, unsigned, unsigned, int)>("probe_launch_cluster_ex");
  ASSERT_EQ(launch(out_, 2, 8, 0), cudaSuccess) << last_diagnostic();
  ASSERT_EQ(fake::recorded_launches().size(), 1u);
  EXPECT_EQ(fake::recorded_launches()[0].config.cluster.x, 2u);
  EXPECT_EQ(launch(out_, 4, 6, 0), cudaErrorInvalidClusterSize);
  EXPECT_EQ(launch(out_, 16, 16, 0), cudaErrorInvalidClusterSize);
  EXPECT_EQ(launch(out_, 16, 16, 1), cudaSuccess) << last_diagnostic();
}

TEST_F(RuntimeApi, CompiledClusterDimsApplyToPlainLaunches) {
  auto launch = probe<int (*)(float*, unsigned)>("probe_launch_compiled_cluster");
  EXPECT_EQ(launch(out_, 3), cudaErrorInvalidClusterSize);
  ASSERT_EQ(launch(out_, 4), cudaSuccess) << last_diagnostic();
  EXPECT_EQ(fake::recorded_launches().back().config.cluster.x, 2u);
}

TEST_F(RuntimeApi, SymbolsCopyBothWaysAndRefuseOverruns) {
  auto symbols = probe<int (*)(float*)>("probe_symbols");
  float readback[16] = {};
  EXPECT_EQ(symbols(readback), cudaErrorInvalidValue);  // the deliberate overrun at the end
  for (int i = 0; i < 16; ++i) EXPECT_EQ(readback[i], static_cast<float>(i) * 0.5f);
  EXPECT_NE(last_diagnostic().find("overrun"), std::string::npos);
}

TEST_F(RuntimeApi, TensorMapThroughDriverEntryPointReachesTheKernel) {
  auto tensor_map = probe<int (*)(void*, uint64_t, uint64_t, uint32_t, uint32_t, int, float*)>(
      "probe_tensor_map");
  void* global = nullptr;
  ASSERT_EQ(cudaMalloc(&global, 512 * 256 * 2), cudaSuccess);
  ASSERT_EQ(tensor_map(global, 512, 256, 64, 64, 3, out_), cudaSuccess) << last_diagnostic();
  ASSERT_EQ(fake::recorded_launches().size(), 1u);
  const auto& params = fake::recorded_launches()[0].params;
  ASSERT_GE(params.size(), kTensorMapBytes);
  auto desc = decode_tensor_map(params.data());
  ASSERT_TRUE(desc.has_value());
  EXPECT_EQ(desc->global_address, reinterpret_cast<uint64_t>(global));
  EXPECT_EQ(desc->global_dim[0], 256u);
  EXPECT_EQ(desc->box_dim[1], 64u);
  // A 128-wide fp16 box is 256 bytes, wider than the 128B swizzle: the driver refuses.
  EXPECT_EQ(tensor_map(global, 512, 256, 64, 128, 3, out_), 1000 + 1);
  EXPECT_NE(last_diagnostic().find("swizzle"), std::string::npos);
}

TEST_F(RuntimeApi, MemcpyRoundTripThroughDeviceMemory) {
  float host[64], back[64] = {};
  for (int i = 0; i < 64; ++i) host[i] = static_cast<float>(i) + 0.25f;
  ASSERT_EQ(cudaMemcpy(out_, host, sizeof host, cudaMemcpyHostToDevice), cudaSuccess);
  float* other = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&other), sizeof host), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(other, out_, sizeof host, cudaMemcpyDefault), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(back, other, sizeof back, cudaMemcpyDefault, nullptr), cudaSuccess);
  EXPECT_EQ(std::memcmp(host, back, sizeof host), 0);
  ASSERT_EQ(cudaMemset(other, 0, sizeof host), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(back, other, sizeof back, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back[7], 0.0f);
  EXPECT_EQ(cudaFree(other), cudaSuccess);
}

TEST_F(RuntimeApi, CopyPastTheEndOfAnAllocationIsRefused) {
  float host[2048] = {};
  EXPECT_EQ(cudaMemcpy(out_, host, sizeof host, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  EXPECT_NE(last_diagnostic().find("overruns the allocation"), std::string::npos);
}

TEST_F(RuntimeApi, WrongCopyKindIsRefused) {
  float host[4] = {};
  EXPECT_EQ(cudaMemcpy(host, out_, sizeof host, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
}

TEST_F(RuntimeApi, FreeingAnUnknownPointerIsAnError) {
  EXPECT_EQ(cudaFree(reinterpret_cast<char*>(out_) + 16), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFree(out_), cudaSuccess);
  EXPECT_EQ(cudaFree(out_), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFree(nullptr), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST_F(RuntimeApi, FaultedLaunchReturnsIllegalAddressAndBreaksTheContext) {
  fake::set_kernel_body("bounded_kernel", [](Device&, const fake::RecordedLaunch&) {
    LaunchReport report;
    LaunchFault fault;
    fault.kind = "out_of_bounds";
    fault.message = "st.global.f32 at 0x10 is outside every allocation";
    fault.source = "probe_kernels.cu:28:5";
    report.faults.push_back(fault);
    return report;
  });
  auto launch = probe<int (*)(float*, int)>("probe_launch_bounded");
  EXPECT_EQ(launch(out_, 64), cudaErrorIllegalAddress);
  auto faults = nlohmann::json::parse(kiln_sim_last_faults());
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0]["kind"], "out_of_bounds");
  EXPECT_EQ(faults[0]["source"], "probe_kernels.cu:28:5");
  // Sticky, as on a GPU: later calls fail until cudaDeviceReset.
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  EXPECT_EQ(cudaGetLastError(), cudaErrorIllegalAddress);
  EXPECT_EQ(cudaGetLastError(), cudaErrorIllegalAddress);
  EXPECT_EQ(cudaDeviceReset(), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TEST_F(RuntimeApi, StreamsAndEventsValidateHandlesAndKeepALogicalClock) {
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  cudaEvent_t start = nullptr, stop = nullptr, untimed = nullptr;
  ASSERT_EQ(cudaEventCreate(&start), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&stop), cudaSuccess);
  ASSERT_EQ(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming), cudaSuccess);
  float ms = -1;
  EXPECT_EQ(cudaEventElapsedTime(&ms, start, stop), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidResourceHandle);  // else the probe sees it
  ASSERT_EQ(cudaEventRecord(start, stream), cudaSuccess);
  auto launch = probe<int (*)(float*, int)>("probe_launch_bounded");
  ASSERT_EQ(launch(out_, 64), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(stop, stream), cudaSuccess);
  ASSERT_EQ(cudaEventSynchronize(stop), cudaSuccess);
  ASSERT_EQ(cudaEventElapsedTime(&ms, start, stop), cudaSuccess);
  EXPECT_GT(ms, 0.0f);
  EXPECT_LT(ms, 0.01f);
  ASSERT_EQ(cudaEventRecord(untimed, stream), cudaSuccess);
  EXPECT_EQ(cudaEventElapsedTime(&ms, start, untimed), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(cudaStreamQuery(stream), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaStreamSynchronize(cudaStreamPerThread), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(start), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(stop), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(untimed), cudaSuccess);
}

TEST_F(RuntimeApi, DevicePropertiesDescribeASimulatedH200) {
  cudaDeviceProp prop;
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  EXPECT_EQ(prop.major, 9);
  EXPECT_EQ(prop.multiProcessorCount, 132);
  EXPECT_EQ(prop.sharedMemPerBlockOptin, 227u * 1024);
  EXPECT_NE(std::string(prop.name).find("H200"), std::string::npos);
  int value = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&value, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0),
            cudaSuccess);
  EXPECT_EQ(value, 227 * 1024);
  EXPECT_EQ(cudaDeviceGetAttribute(&value, cudaDevAttrWarpSize, 1), cudaErrorInvalidDevice);
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(cudaSetDevice(1), cudaErrorInvalidDevice);
}

TEST_F(RuntimeApi, ErrorNamesAndStrings) {
  EXPECT_STREQ(cudaGetErrorName(cudaErrorIllegalAddress), "cudaErrorIllegalAddress");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorInvalidValue), "invalid argument");
  EXPECT_STREQ(cudaGetErrorString(static_cast<cudaError_t>(123456)), "unrecognized error code");
}

}  // namespace
}  // namespace kiln::sim
