// The report of `kiln task check`: a flagged or failed step decides the verdict, a step not
// run never counts as passed, and both report files are written.
#include "kiln/taskcheck/check_report.h"

#include <gmock/gmock.h>

#include "support/temp_dir.h"

namespace kiln::taskcheck {
namespace {

using json = nlohmann::json;
using kiln::testing::read_text;
using kiln::testing::TempDir;
using ::testing::HasSubstr;

Step step(const std::string& id, StepState state) {
  return Step{id, "title of " + id, state, "detail of " + id, 1.5, json::object()};
}

CheckReport report(std::vector<Step> steps) {
  CheckReport r;
  r.task = "t";
  r.sha256 = "abc123";
  r.steps = std::move(steps);
  return r;
}

TEST(CheckReport, AFlaggedStepMakesTheVerdictFlaggedEvenBesideAFailure) {
  const CheckReport r =
      report({step("load", StepState::kPassed), step("sim_starter", StepState::kFailed),
              step("sim_negative:perturb_one[y]", StepState::kFlagged)});
  EXPECT_FALSE(r.passed());
  EXPECT_THAT(r.verdict(), HasSubstr("FLAGGED"));
  EXPECT_THAT(r.verdict(), HasSubstr("sim_negative:perturb_one[y]"));
  EXPECT_TRUE(r.to_json()["flagged"].get<bool>());
}

TEST(CheckReport, AStepNotRunIsNeverCountedAsPassed) {
  const CheckReport r =
      report({step("load", StepState::kPassed), step("gpu_benchmark:starter", StepState::kNotRun)});
  EXPECT_TRUE(r.passed());
  EXPECT_FALSE(r.complete());
  EXPECT_THAT(r.verdict(), HasSubstr("not run: gpu_benchmark:starter"));
  EXPECT_EQ(r.to_json()["steps"][1]["state"], "not_run");
  EXPECT_FALSE(r.to_json()["complete"].get<bool>());
}

TEST(CheckReport, EveryStepPassedGivesTheHashToFreeze) {
  const CheckReport r = report({step("load", StepState::kPassed)});
  EXPECT_TRUE(r.complete());
  EXPECT_THAT(r.verdict(), HasSubstr("freeze sha256 abc123"));
}

TEST(CheckReport, WritesJsonAndTextWithEveryStep) {
  TempDir dir;
  const CheckReport r =
      report({step("load", StepState::kPassed), step("build_starter", StepState::kFailed)});
  ASSERT_TRUE(write_report(r, dir / "out"));
  const json j = json::parse(read_text(dir / "out" / "report.json"));
  EXPECT_EQ(j["sha256"], "abc123");
  EXPECT_EQ(j["steps"].size(), 2u);
  EXPECT_EQ(j["steps"][1]["state"], "failed");
  const std::string text = read_text(dir / "out" / "report.txt");
  EXPECT_THAT(text, HasSubstr("FAILED  title of build_starter [build_starter, 1.5 s]"));
  EXPECT_THAT(text, HasSubstr("bundle sha256: abc123"));
}

}  // namespace
}  // namespace kiln::taskcheck
