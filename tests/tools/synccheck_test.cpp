// synccheck's static engine through a server built the way `kiln mcp` builds it: nvcc to PTX,
// the analysis, findings with .cu lines and fixes, limit/offset, refusals.
#include <gtest/gtest.h>

#include "toolbox_fixture.h"

namespace kiln::tools {
namespace {

using json = nlohmann::json;

// Line 5 is the barrier after the thread-dependent early return.
constexpr const char* kEarlyReturn = R"(#include "kiln/abi.h"
__global__ void stage(float* x, int n) {
  __shared__ float tile[256];
  if (threadIdx.x >= n) return;
  tile[threadIdx.x] = x[threadIdx.x]; __syncthreads();
  x[threadIdx.x] = tile[255 - threadIdx.x];
}
extern "C" int kiln_launch(const kiln_tensor* t, int, const kiln_scalar*, int, cudaStream_t s) {
  stage<<<1, 256, 0, s>>>(static_cast<float*>(t[0].data), static_cast<int>(t[0].shape[0]));
  return 0;
}
)";

constexpr const char* kFixed = R"(#include "kiln/abi.h"
__global__ void stage(float* x, int n) {
  __shared__ float tile[256];
  const bool in = threadIdx.x < n;
  tile[threadIdx.x] = in ? x[threadIdx.x] : 0.0f; __syncthreads();
  if (in) x[threadIdx.x] = tile[255 - threadIdx.x];
}
extern "C" int kiln_launch(const kiln_tensor* t, int, const kiln_scalar*, int, cudaStream_t s) {
  stage<<<1, 256, 0, s>>>(static_cast<float*>(t[0].data), static_cast<int>(t[0].shape[0]));
  return 0;
}
)";

class SynccheckToolTest : public NvccToolboxTest {
 protected:
  mcp::ToolResult call(const json& arguments) { return call_tool("synccheck", arguments); }
};

TEST_F(SynccheckToolTest, FindsTheBarrierAfterAnEarlyReturnWithItsLineAndAFix) {
  auto result = call({{"source", kEarlyReturn}});
  EXPECT_FALSE(result.is_error) << result.text;  // findings are the check working
  EXPECT_EQ(result.structured["engine"], "static");
  EXPECT_EQ(result.structured["verdict"], "findings");
  ASSERT_EQ(result.structured["findings_total"], 1);
  const json& f = result.structured["findings"][0];
  EXPECT_EQ(f["kind"], "barrier_divergence");
  EXPECT_EQ(f["file"], "kernel.cu");
  EXPECT_EQ(f["line"], 5);
  EXPECT_GT(f["ptx_line"].get<int>(), 0);
  EXPECT_NE(f["fix_hint"].get<std::string>(), "");
  EXPECT_NE(result.text.find("kernel.cu:5"), std::string::npos) << result.text;
  EXPECT_NE(result.text.find("fix:"), std::string::npos);
}

TEST_F(SynccheckToolTest, ReportsAFixedKernelClean) {
  auto result = call({{"source", kFixed}});
  EXPECT_FALSE(result.is_error) << result.text;
  EXPECT_EQ(result.structured["verdict"], "clean");
  EXPECT_EQ(result.structured["findings"].size(), 0u);
}

TEST_F(SynccheckToolTest, ChecksTheTaskStartersFromTheBundles) {
  auto result = call({{"path", std::string(KILN_TASKS_DIR) + "/fp16_gemm/starter.cu"}});
  EXPECT_EQ(result.structured["verdict"], "clean") << result.text;
}

TEST_F(SynccheckToolTest, PagesFindingsWithLimitAndOffset) {
  auto all = call({{"source", kEarlyReturn}, {"offset", 1}});
  EXPECT_EQ(all.structured["findings_total"], 1);
  EXPECT_EQ(all.structured["findings"].size(), 0u);
}

TEST_F(SynccheckToolTest, SendsCompileErrorsToCompile) {
  auto result = call({{"source", "__global__ void k() { nope; }\n"}});
  EXPECT_TRUE(result.is_error);
  EXPECT_EQ(result.structured["error"]["code"], "compile_error");
  EXPECT_NE(result.text.find("does not compile"), std::string::npos) << result.text;
  EXPECT_NE(result.text.find("run compile"), std::string::npos);
}

TEST_F(SynccheckToolTest, RefusesPathsOutsideTheRunDirectory) {
  auto result = call({{"path", "/etc/passwd"}});
  EXPECT_TRUE(result.is_error);
}

TEST_F(SynccheckToolTest, GpuEngineWithoutARunnerSaysHowToConfigureOne) {
  auto result = call({{"source", kFixed}, {"engine", "gpu"}});
  EXPECT_TRUE(result.is_error);
  EXPECT_NE(result.text.find("KILN_RUNNER"), std::string::npos) << result.text;
}

}  // namespace
}  // namespace kiln::tools
