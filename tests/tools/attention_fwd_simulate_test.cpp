// simulate on the attention_fwd task through a server built the way `kiln mcp` builds it: the
// task's starter and baseline, and the zoo's two attention kernels as candidates of the task,
// pass every sim workload (O and LSE both compared with the CPU reference). The baseline is
// kb/zoo/attention_hopper_wgmma/kernel.cu below a header (tests/tasks checks that), so its
// test covers that entry; attention_flash_mma is passed as a source.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "toolbox_fixture.h"

namespace kiln::tools {
namespace {

using json = nlohmann::json;

class AttentionFwdSimulateTest : public NvccToolboxTest {
 protected:
  void configure(ToolboxConfig& config) override { config.sim_runner = KILN_SIM_RUN; }

  // simulate with {task: attention_fwd} and `candidate` (a path or a source), every sim
  // workload; checks that all of them pass and returns the result.
  void expect_every_workload_passes(const json& candidate) {
    json arguments = candidate;
    arguments["task"] = "attention_fwd";
    const mcp::ToolResult result = call_tool("simulate", arguments);
    ASSERT_FALSE(result.is_error) << result.text;
    EXPECT_EQ(result.structured["ok"], true);
    EXPECT_EQ(result.structured["total"], 4);
    EXPECT_EQ(result.structured["passed"], 4) << result.text;
    for (const json& workload : result.structured["workloads"]) {
      EXPECT_EQ(workload["passed"], true) << workload.dump(2);
      EXPECT_EQ(workload["mismatches"], 0);
    }
    EXPECT_NE(result.text.find("PASS 1x1x384x64_causal"), std::string::npos) << result.text;
  }
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string zoo_kernel(const std::string& id) {
  return read_file(std::string(KILN_KB_DIR) + "/zoo/" + id + "/kernel.cu");
}

TEST_F(AttentionFwdSimulateTest, StarterPassesEverySimWorkload) {
  expect_every_workload_passes(
      {{"path", std::string(KILN_TASKS_DIR) + "/attention_fwd/starter.cu"}});
}

TEST_F(AttentionFwdSimulateTest, BaselinePassesEverySimWorkload) {
  expect_every_workload_passes(
      {{"path", std::string(KILN_TASKS_DIR) + "/attention_fwd/baseline.cu"}});
}

TEST_F(AttentionFwdSimulateTest, ZooFlashMmaKernelIsACandidateThatPasses) {
  const std::string source = zoo_kernel("attention_flash_mma");
  ASSERT_FALSE(source.empty());
  expect_every_workload_passes({{"source", source}});
}

}  // namespace
}  // namespace kiln::tools
