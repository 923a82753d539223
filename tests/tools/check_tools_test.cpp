// synccheck's and racecheck's gpu engine end to end against the fake worker: a sanitize job
// on the runner, compute-sanitizer's findings in kiln's format.
#include <gmock/gmock.h>

#include "tool_fixture.h"

namespace kiln::runner {
namespace {

using namespace kiln::runner::testing;
using ::testing::HasSubstr;

class CheckToolsTest : public ToolTest {};

TEST_F(CheckToolsTest, SynccheckGpuEngineReportsSanitizerFindings) {
  start();
  auto result =
      call("synccheck", {{"source", fake_source("sanitize_findings")}, {"engine", "gpu"}});
  EXPECT_FALSE(result.is_error) << result.text;  // findings are the check working
  EXPECT_EQ(result.structured["engine"], "gpu");
  EXPECT_EQ(result.structured["verdict"], "findings");
  ASSERT_EQ(result.structured["findings"].size(), 1u);
  EXPECT_EQ(result.structured["findings"][0]["kind"], "barrier_divergence");
  EXPECT_EQ(result.structured["findings"][0]["line"], 7);
  EXPECT_TRUE(result.structured.contains("job_id"));
  EXPECT_THAT(result.text, HasSubstr("compute-sanitizer synccheck"));
}

TEST_F(CheckToolsTest, RacecheckReportsADataRace) {
  start();
  auto result = call("racecheck", {{"source", fake_source("sanitize_findings")}});
  EXPECT_FALSE(result.is_error) << result.text;
  ASSERT_EQ(result.structured["findings"].size(), 1u);
  EXPECT_EQ(result.structured["findings"][0]["kind"], "data_race");
  EXPECT_THAT(result.text, HasSubstr("kernel.cu:7"));
}

TEST_F(CheckToolsTest, ACleanRunIsClean) {
  start();
  auto result = call("racecheck", {{"source", fake_source("pass")}});
  EXPECT_FALSE(result.is_error) << result.text;
  EXPECT_EQ(result.structured["verdict"], "clean");
}

TEST_F(CheckToolsTest, AJobThatCouldNotCheckIsIncompleteAndAnError) {
  start();
  auto result = call("racecheck", {{"source", fake_source("build_error")}});
  EXPECT_EQ(result.structured["verdict"], "incomplete") << result.text;
  EXPECT_TRUE(result.is_error);
  EXPECT_EQ(result.structured["error"]["code"], "compile_error");
  EXPECT_THAT(result.text, HasSubstr("stage build"));
}

// Without a runner racecheck's default is the sim engine (racecheck_sim_test.cpp); the gpu
// engine, asked for, says how to get a runner.
TEST_F(CheckToolsTest, WithoutARunnerRacecheckOnTheGpuSaysHowToGetOne) {
  start(false);
  auto result = call("racecheck", {{"source", fake_source("pass")}, {"engine", "gpu"}});
  EXPECT_TRUE(result.is_error);
  EXPECT_EQ(result.structured["error"]["code"], "no_runner");
  EXPECT_THAT(result.text, HasSubstr("KILN_RUNNER"));
}

}  // namespace
}  // namespace kiln::runner
