// compile through a server built the way `kiln mcp` builds it: candidates from the run
// directory, the task bundles or inline source; diagnostics, kernels, the cache, refusals.
#include <gtest/gtest.h>

#include "toolbox_fixture.h"

namespace kiln::tools {
namespace {

using json = nlohmann::json;

constexpr const char* kKernel = R"(#include "kiln/abi.h"
__global__ void __launch_bounds__(256) add_one(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}
extern "C" int kiln_launch(const kiln_tensor* t, int, const kiln_scalar*, int, cudaStream_t s) {
  int n = static_cast<int>(t[0].shape[0]);
  add_one<<<(n + 255) / 256, 256, 0, s>>>(static_cast<float*>(t[0].data), n);
  return 0;
}
)";

constexpr const char* kBroken = R"(__global__ void k(float* x) {
  x[0] = not_declared;
}
)";

class CompileToolTest : public NvccToolboxTest {
 protected:
  mcp::ToolResult call(const json& arguments) { return call_tool("compile", arguments); }
};

TEST_F(CompileToolTest, InlineSourceReportsKernelsAndTheSecondCallIsACacheHit) {
  auto first = call({{"source", kKernel}});
  ASSERT_FALSE(first.is_error) << first.text;
  EXPECT_EQ(first.structured["ok"], true);
  EXPECT_EQ(first.structured["cache_hit"], false);
  EXPECT_EQ(first.structured["arch"], "sm_90a");
  ASSERT_EQ(first.structured["kernels"].size(), 1u);
  const json& kernel = first.structured["kernels"][0];
  EXPECT_EQ(kernel["demangled"], "add_one(float*, int)");
  EXPECT_GT(kernel["registers"].get<int>(), 0);
  EXPECT_EQ(kernel["max_threads"], 256);
  EXPECT_EQ(kernel["block_size_source"], "launch_bounds");
  EXPECT_GT(kernel["occupancy"]["blocks_per_sm"].get<int>(), 0);
  EXPECT_GE(kernel["instruction_mix"]["counts"]["ld.global.32"].get<int>(), 1);
  EXPECT_NE(first.structured["occupancy_gpu"].get<std::string>().find("H200"), std::string::npos);
  EXPECT_NE(first.text.find("kernel add_one(float*, int)"), std::string::npos) << first.text;
  EXPECT_NE(first.text.find("limited by"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(first.structured["ptx_path"].get<std::string>()));

  auto second = call({{"source", kKernel}});
  ASSERT_FALSE(second.is_error);
  EXPECT_EQ(second.structured["cache_hit"], true);
  EXPECT_EQ(second.structured["kernels"], first.structured["kernels"]);
  EXPECT_NE(second.text.find("cache hit"), std::string::npos);
}

TEST_F(CompileToolTest, CompilesAFileInTheRunDirectoryByRelativePath) {
  testing::write_text(run_dir_ / "worktree/candidates/a/kernel.cu", kKernel);
  auto result = call({{"path", "worktree/candidates/a/kernel.cu"}});
  ASSERT_FALSE(result.is_error) << result.text;
  EXPECT_EQ(result.structured["file"], "worktree/candidates/a/kernel.cu");
}

TEST_F(CompileToolTest, CompilesTheTaskStarterInTheBundle) {
  const std::string starter = std::string(KILN_TASKS_DIR) + "/fp16_gemm/starter.cu";
  auto result = call({{"path", starter}});
  ASSERT_FALSE(result.is_error) << result.text;
  EXPECT_EQ(result.structured["file"], "tasks/fp16_gemm/starter.cu");
  EXPECT_GE(result.structured["kernels"].size(), 1u);
}

TEST_F(CompileToolTest, CompileErrorIsAnErrorResultWithLocatedDiagnostics) {
  testing::write_text(run_dir_ / "broken.cu", kBroken);
  auto result = call({{"path", "broken.cu"}});
  ASSERT_TRUE(result.is_error);
  EXPECT_EQ(result.structured["ok"], false);
  ASSERT_GE(result.structured["diagnostics"].size(), 1u);
  const json& d = result.structured["diagnostics"][0];
  EXPECT_EQ(d["file"], "broken.cu");
  EXPECT_EQ(d["line"], 2);
  EXPECT_EQ(d["column"], 10);
  EXPECT_EQ(d["source_line"], "  x[0] = not_declared;");
  EXPECT_NE(result.text.find("broken.cu:2:10: error"), std::string::npos) << result.text;
  EXPECT_NE(result.text.find("next: fix the errors"), std::string::npos);
}

TEST_F(CompileToolTest, RefusesPathsOutsideTheRunDirectoryAndTheTasks) {
  testing::TempDir elsewhere;
  testing::write_text(elsewhere / "kernel.cu", kKernel);
  std::filesystem::create_symlink(elsewhere / "kernel.cu", run_dir_ / "link.cu");
  for (const std::string& path :
       {(elsewhere / "kernel.cu").string(),
        std::string("../") + elsewhere.path().filename().string() + "/kernel.cu",
        std::string("link.cu"), std::string("/etc/passwd"),
        std::string(KILN_TASKS_DIR) + "/../README.md"}) {
    auto result = call({{"path", path}});
    EXPECT_TRUE(result.is_error) << path;
    EXPECT_NE(result.text.find("outside the run directory"), std::string::npos) << result.text;
  }
}

TEST_F(CompileToolTest, WantsExactlyOneOfPathAndSource) {
  EXPECT_TRUE(call(json::object()).is_error);
  auto both = call({{"path", "kernel.cu"}, {"source", kKernel}});
  ASSERT_TRUE(both.is_error);
  EXPECT_NE(both.text.find("exactly one"), std::string::npos);
}

TEST_F(CompileToolTest, RefusesFlagsOffTheAllowList) {
  auto result = call({{"source", kKernel}, {"flags", {"-G"}}});
  ASSERT_TRUE(result.is_error);
  EXPECT_NE(result.text.find("`-G` is not allowed"), std::string::npos) << result.text;
  EXPECT_EQ(result.structured["ok"], false);
}

TEST_F(CompileToolTest, BlockSizeAndDynamicSharedMemoryChangeOnlyTheEstimate) {
  auto base = call({{"source", kKernel}});
  auto wider = call({{"source", kKernel}, {"block_size", 128}, {"dynamic_smem_bytes", 65536}});
  ASSERT_FALSE(wider.is_error) << wider.text;
  EXPECT_EQ(wider.structured["cache_hit"], true);
  const json& kernel = wider.structured["kernels"][0];
  EXPECT_EQ(kernel["block_size"], 128);
  EXPECT_EQ(kernel["dynamic_smem_bytes"], 65536);
  EXPECT_EQ(kernel["occupancy"]["limiter"], "shared_memory");
}

TEST_F(CompileToolTest, ArchArgumentOverridesTheTask) {
  auto result = call({{"source", kKernel}, {"arch", "sm_80"}});
  ASSERT_FALSE(result.is_error) << result.text;
  EXPECT_EQ(result.structured["arch"], "sm_80");
  EXPECT_NE(result.structured["occupancy_gpu"].get<std::string>().find("sm_80"), std::string::npos);
}

TEST_F(CompileToolTest, OutputStaysUnderTenKilobytes) {
  auto result = call({{"source", kKernel}});
  EXPECT_LT(result.text.size(), 10u * 1024u);
  EXPECT_LT(result.structured.dump().size(), 10u * 1024u);
}

TEST_F(CompileToolTest, DeclarationIsReadOnlyIdempotentAndClosedWorld) {
  const mcp::Tool* tool = server_.tools().find("compile");
  ASSERT_NE(tool, nullptr);
  EXPECT_FALSE(tool->title.empty());
  EXPECT_LT(tool->description.size(), 1024u);
  EXPECT_TRUE(tool->annotations.read_only);
  EXPECT_TRUE(tool->annotations.idempotent);
  EXPECT_FALSE(tool->annotations.open_world);
  EXPECT_FALSE(tool->annotations.destructive);
  // `ok` is required of every result; a failure that carries only the error has it too.
  EXPECT_EQ(tool->output_schema["anyOf"][0]["required"], json::array({"ok"}));
}

}  // namespace
}  // namespace kiln::tools
