// The profile tool end to end against the fake worker.
#include <gmock/gmock.h>

#include "tool_fixture.h"

namespace kiln::runner {
namespace {

using namespace kiln::runner::testing;
using ::testing::HasSubstr;

class ProfileToolTest : public ToolTest {};

TEST_F(ProfileToolTest, SummarizesEachKernel) {
  start();
  auto result = call("profile", {{"source", fake_source("pass")}, {"workload", "1024x4096x4096"}});
  ASSERT_FALSE(result.is_error) << result.text;
  EXPECT_EQ(result.structured["profile"]["workload"], "1024x4096x4096");
  EXPECT_TRUE(result.structured.contains("result_id"));
  EXPECT_THAT(result.text, HasSubstr("workload 1024x4096x4096, 1 kernel(s)"));
  EXPECT_THAT(result.text, HasSubstr("kernel gemm_kernel grid [128,1,1] block [256,1,1]\n"));
  EXPECT_THAT(result.text, HasSubstr("sm_throughput_pct 78.25"));
  EXPECT_THAT(result.text, HasSubstr("registers 168"));
  EXPECT_THAT(result.text, HasSubstr("shared_dynamic_bytes 98304"));
  EXPECT_THAT(result.text, HasSubstr("l2_hit_rate_pct 91"));
  EXPECT_THAT(result.text, HasSubstr("top stalls: long_scoreboard (3.5)"));
  EXPECT_THAT(result.text, HasSubstr("note: fake: memory-bound"));
}

TEST_F(ProfileToolTest, DefaultsToTheTasksFirstWorkload) {
  start();
  auto result = call("profile", {{"source", fake_source("pass")}});
  ASSERT_FALSE(result.is_error) << result.text;
  EXPECT_EQ(result.structured["profile"]["workload"], bundled_task().workloads.front().name);
}

TEST_F(ProfileToolTest, UnknownWorkloadIsRefused) {
  start();
  auto result = call("profile", {{"source", fake_source("pass")}, {"workload", "1x1x1"}});
  EXPECT_TRUE(result.is_error);
  EXPECT_THAT(result.text, HasSubstr("not a workload"));
}

TEST_F(ProfileToolTest, ErrorsSayWhereTheJobStopped) {
  start();
  auto result = call("profile", {{"source", fake_source("crash")}});
  EXPECT_TRUE(result.is_error);
  EXPECT_THAT(result.text, HasSubstr("ERROR in stage verify"));
  EXPECT_THAT(result.text, HasSubstr("SIGSEGV"));
}

}  // namespace
}  // namespace kiln::runner
