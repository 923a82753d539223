// Zoo tasks ("zoo:ID", kiln/tasks/zoo_task.h) through the simulate tool of a server built as
// `kiln mcp` builds it: every zoo entry that no bundled task can take (no task in tasks/ has its
// test signature) runs its own kernel.cu on the simulator and passes its contract; an agent's own
// kernel runs against an entry's contract; unknown ids, entries without a test block, a
// candidate of another signature and benchmark on a zoo task are refused with what to do.
//
// ZooTaskSimulate/zoo_task_simulate.EntryKernelPasses/<ID> is one test per entry (label sim, in
// CI: about 2 s each, nvcc included).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "kiln/tasks/zoo_task.h"
#include "support/temp_dir.h"
#include "toolbox_fixture.h"

namespace kiln::tools {
namespace {

using json = nlohmann::json;
using ::testing::AllOf;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

// Whether a bundle takes the entry's kernels as candidates: the same tensors (name, dtype,
// shape) and scalars, in order.
bool bundled_task_takes(const tasks::Task& zoo, const std::vector<tasks::Task>& bundles) {
  auto same = [&](const tasks::Task& bundle) {
    if (bundle.tensors.size() != zoo.tensors.size() || bundle.scalars.size() != zoo.scalars.size())
      return false;
    for (size_t t = 0; t < zoo.tensors.size(); ++t) {
      const auto &a = zoo.tensors[t], &b = bundle.tensors[t];
      if (a.name != b.name || a.dtype != b.dtype || a.shape != b.shape ||
          a.is_output != b.is_output)
        return false;
    }
    for (size_t s = 0; s < zoo.scalars.size(); ++s)
      if (zoo.scalars[s].name != bundle.scalars[s].name) return false;
    return true;
  };
  return std::any_of(bundles.begin(), bundles.end(), same);
}

// The zoo entries without a bundled task, read when the test binary starts (so entries added to
// kb/zoo are picked up).
std::vector<std::string> entries_without_a_task() {
  const tasks::TaskCatalog catalog = tasks::load_catalog(KILN_TASKS_DIR);
  std::vector<std::string> out;
  for (const std::string& id : tasks::zoo_task_ids(fs::path(KILN_KB_DIR) / "zoo")) {
    auto task = tasks::load_zoo_task(fs::path(KILN_KB_DIR) / "zoo", id);
    if (!task || !bundled_task_takes(*task, catalog.tasks)) out.push_back(id);
  }
  return out;
}

class ZooTaskTest : public NvccToolboxTest {
 protected:
  void configure(ToolboxConfig& config) override {
    config.sim_runner = KILN_SIM_RUN;
    config.kb_dir = KILN_KB_DIR;
  }
  mcp::ToolResult simulate(const json& arguments) { return call_tool("simulate", arguments); }
};

class zoo_task_simulate : public ZooTaskTest, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override { ZooTaskTest::SetUp(); }
};

TEST_P(zoo_task_simulate, EntryKernelPasses) {
  const std::string id = GetParam();
  auto result = simulate({{"task", "zoo:" + id}, {"time_limit_s", 600}});
  ASSERT_FALSE(result.is_error) << result.text;
  EXPECT_EQ(result.structured["ok"], true);
  EXPECT_EQ(result.structured["task"], "zoo:" + id);
  EXPECT_EQ(result.structured["file"], "zoo/" + id + "/kernel.cu");
  EXPECT_EQ(result.structured["total"], 1);
  EXPECT_EQ(result.structured["passed"], 1) << result.text;
  for (const json& workload : result.structured["workloads"])
    EXPECT_EQ(workload["status"], "pass") << workload.dump(2);
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  std::replace_if(
      name.begin(), name.end(), [](char c) { return !std::isalnum(c); }, '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(ZooTaskSimulate, zoo_task_simulate,
                         ::testing::ValuesIn(entries_without_a_task()), test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(zoo_task_simulate);

TEST(ZooTaskEntries, TheEntriesTheIssueNamesHaveNoBundledTaskAndRunHere) {
  const std::vector<std::string> ids = entries_without_a_task();
  for (const char* id :
       {"attention_flash_mma", "attention_hopper_wgmma", "grouped_gemm_wgmma", "gemm_fp8_wgmma",
        "layernorm_bf16", "softmax_online", "reduce_two_pass", "reduce_warp_shuffle", "scan_block",
        "topk_rowwise", "transpose_smem", "silu_mul_elementwise"})
    EXPECT_NE(std::find(ids.begin(), ids.end(), id), ids.end()) << id;
  // The GEMM entries are fp16_gemm candidates, and not run twice.
  EXPECT_EQ(std::find(ids.begin(), ids.end(), "gemm_naive"), ids.end());
}

// y = x^T for f32 [R, C], refusing tensors of any other signature as kiln/abi.h asks.
constexpr const char* kTranspose = R"(#include "kiln/abi.h"
__global__ void transpose(const float* x, float* y, long R, long C) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < R * C) y[(i % C) * R + i / C] = x[i];
}
extern "C" int kiln_launch(const kiln_tensor* t, int n, const kiln_scalar*, int, cudaStream_t s) {
  if (n != 2 || t[0].dtype != KILN_F32 || t[1].dtype != KILN_F32 || t[0].rank != 2 ||
      t[1].rank != 2 || t[1].shape[0] != t[0].shape[1] || t[1].shape[1] != t[0].shape[0])
    return KILN_ERR_BAD_ARGUMENT;
  long R = t[0].shape[0], C = t[0].shape[1];
  transpose<<<(R * C + 255) / 256, 256, 0, s>>>(static_cast<const float*>(t[0].data),
                                                static_cast<float*>(t[1].data), R, C);
  return cudaGetLastError() == cudaSuccess ? 0 : KILN_ERR_LAUNCH;
}
)";

TEST_F(ZooTaskTest, AnAgentsOwnKernelRunsAgainstAnEntrysContract) {
  auto result = simulate({{"task", "zoo:transpose_smem"}, {"source", kTranspose}});
  ASSERT_FALSE(result.is_error) << result.text;
  EXPECT_EQ(result.structured["passed"], 1);
  // Ad-hoc shapes follow the contract's dims.
  result =
      simulate({{"task", "zoo:transpose_smem"}, {"source", kTranspose}, {"shapes", {"R=5,C=7"}}});
  ASSERT_FALSE(result.is_error) << result.text;
  // Named by its values in the task's dim order (the names sorted: C, then R).
  EXPECT_EQ(result.structured["workloads"][0]["name"], "7x5");
}

TEST_F(ZooTaskTest, ACandidateOfAnotherSignatureFailsAtLaunch) {
  auto result = simulate({{"task", "zoo:topk_rowwise"}, {"source", kTranspose}});
  ASSERT_TRUE(result.is_error);
  EXPECT_EQ(result.structured["passed"], 0);
  const json& workload = result.structured["workloads"][0];
  EXPECT_EQ(workload["status"], "launch_error") << workload.dump(2);
  EXPECT_THAT(workload["message"].get<std::string>(), HasSubstr("kiln_launch returned"));
}

TEST_F(ZooTaskTest, AnUnknownEntryIsRefusedWithTheIds) {
  // Without a candidate, there is no entry kernel to default to.
  auto result = simulate({{"task", "zoo:no_such_entry"}});
  ASSERT_TRUE(result.is_error);
  EXPECT_THAT(result.text, AllOf(HasSubstr("zoo entry `no_such_entry`"), HasSubstr("search_zoo")));
  // With one, the task itself is refused, listing the entries there are.
  result = simulate({{"task", "zoo:no_such_entry"}, {"source", kTranspose}});
  ASSERT_TRUE(result.is_error);
  EXPECT_THAT(result.text,
              AllOf(HasSubstr("no zoo entry `no_such_entry`"), HasSubstr("softmax_online")));
}

TEST_F(ZooTaskTest, BenchmarkAndProfileRefuseAZooTask) {
  for (const std::string tool : {"benchmark", "profile"}) {
    auto result = call_tool(tool, {{"task", "zoo:softmax_online"}, {"source", kTranspose}});
    ASSERT_TRUE(result.is_error) << tool;
    EXPECT_THAT(result.text, AllOf(HasSubstr(tool + " does not take zoo:softmax_online"),
                                   HasSubstr("simulate")));
  }
}

TEST_F(ZooTaskTest, RacecheckAndSynccheckRunAnEntryOnTheSimulator) {
  for (const std::string tool : {"racecheck", "synccheck"}) {
    auto result = call_tool(tool, {{"task", "zoo:transpose_smem"}, {"engine", "sim"}});
    ASSERT_FALSE(result.is_error) << tool << ": " << result.text;
    EXPECT_EQ(result.structured["verdict"], "clean") << tool << ": " << result.text;
  }
}

TEST_F(ZooTaskTest, GetTaskShowsAZooContract) {
  auto result = call_tool("get_task", {{"name", "zoo:layernorm_bf16"}});
  ASSERT_FALSE(result.is_error) << result.text;
  EXPECT_EQ(result.structured["name"], "zoo:layernorm_bf16");
  EXPECT_EQ(result.structured["zoo"]["op"], "layernorm");
  EXPECT_EQ(result.structured["sim_workloads"].size(), 1u);
}

// A zoo whose one entry has no test block.
class UntestedEntryTest : public ZooTaskTest {
 protected:
  void configure(ToolboxConfig& config) override {
    ZooTaskTest::configure(config);
    kiln::testing::write_text(kb_.path() / "zoo/untested/meta.json",
                              R"({"title": "No test", "op": "softmax"})");
    kiln::testing::write_text(kb_.path() / "zoo/untested/kernel.cu", kTranspose);
    config.kb_dir = kb_.path();
  }
  kiln::testing::TempDir kb_;
};

TEST_F(UntestedEntryTest, AnEntryWithoutATestBlockIsRefused) {
  auto result = simulate({{"task", "zoo:untested"}});
  ASSERT_TRUE(result.is_error);
  EXPECT_THAT(result.text,
              AllOf(HasSubstr("untested/meta.json: test: is missing"), HasSubstr("add a test")));
}

}  // namespace
}  // namespace kiln::tools
