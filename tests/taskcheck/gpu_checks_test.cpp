// How `kiln task check` judges GPU RESULTs (runner/protocol/PROTOCOL.md): a benchmark must pass
// every gate and be scored, timings must stay within the CV budget over repeats, and a wrong
// candidate that a verify job passes is flagged.
#include "gpu_checks.h"

#include <gmock/gmock.h>

namespace kiln::taskcheck {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

json gate(const std::string& name, const std::string& state) {
  return {{"name", name}, {"state", state}, {"passed", state == "passed"}, {"detail", "d"}};
}

json benchmark(double median, double cv, double baseline_median, double baseline_cv) {
  return {{"status", "passed"},
          {"stage", "done"},
          {"gates", {gate("correctness", "passed"), gate("clock_monitoring", "passed")}},
          {"summary", {{"passed", 1}, {"total", 1}, {"scored", true}}},
          {"workloads",
           {{{"name", "w1"},
             {"passed", true},
             {"time_us", {{"median", median}, {"cv", cv}}},
             {"baseline_time_us", {{"median", baseline_median}, {"cv", baseline_cv}}}}}}};
}

TEST(JudgeBenchmark, PassesWhenEveryGatePassedAndTheResultIsScored) {
  const Step s = judge_benchmark("b", "t", {benchmark(10, 0.01, 12, 0.01)});
  EXPECT_EQ(s.state, StepState::kPassed) << s.detail;
}

TEST(JudgeBenchmark, AGateNotRunFailsIt) {
  json r = benchmark(10, 0.01, 12, 0.01);
  r["gates"][1] = gate("clock_monitoring", "not_run");
  r["summary"]["scored"] = false;
  const Step s = judge_benchmark("b", "t", {r});
  EXPECT_EQ(s.state, StepState::kFailed);
  EXPECT_THAT(s.detail, HasSubstr("clock_monitoring (not_run"));
  EXPECT_THAT(s.detail, HasSubstr("not scored"));
}

TEST(JudgeStability, StableRepeatsPass) {
  const Step s = judge_stability(
      "s", {benchmark(10, 0.01, 12, 0.01), benchmark(10.1, 0.01, 12.1, 0.01)}, 0.05, true);
  EXPECT_EQ(s.state, StepState::kPassed) << s.detail;
}

TEST(JudgeStability, AJobWhoseMedianIsNotPinnedDownFails) {
  json noisy = benchmark(10, 0.01, 12, 0.2);
  noisy["workloads"][0]["baseline_time_us"]["rel_noise"] = 0.08;
  const Step s = judge_stability("s", {noisy}, 0.05, true);
  EXPECT_EQ(s.state, StepState::kFailed);
  EXPECT_THAT(s.detail, HasSubstr("baseline w1: the median's 95% interval is ±8.00%"));
}

TEST(JudgeStability, SamplesOfATinyKernelMaySpreadWhileItsMedianHolds) {
  // rmsnorm's 1x1024 on the H200: sample CV 5.9-6.4%, medians 2.848 us in both repeats.
  json a = benchmark(2.848, 0.0586, 2.85, 0.0639);
  json b = benchmark(2.848, 0.0517, 2.85, 0.0641);
  for (json* r : {&a, &b}) {
    (*r)["workloads"][0]["time_us"]["rel_noise"] = 0.004;
    (*r)["workloads"][0]["baseline_time_us"]["rel_noise"] = 0.004;
  }
  const Step s = judge_stability("s", {a, b}, 0.05, true);
  EXPECT_EQ(s.state, StepState::kPassed) << s.detail;
  EXPECT_THAT(s.detail, HasSubstr("worst sample CV 6.41% (reported, not judged)"));
}

TEST(JudgeStability, MediansThatMoveBetweenRepeatsFail) {
  const Step s = judge_stability(
      "s", {benchmark(10, 0.01, 12, 0.01), benchmark(14, 0.01, 12, 0.01)}, 0.05, true);
  EXPECT_EQ(s.state, StepState::kFailed);
  EXPECT_THAT(s.detail, HasSubstr("starter w1: medians over 2 runs"));
}

TEST(JudgeNegative, AWrongCandidateThatPassesIsFlagged) {
  const Step s = judge_negative("n", "t", benchmark(10, 0.01, 12, 0.01), false);
  EXPECT_EQ(s.state, StepState::kFlagged);
}

TEST(JudgeNegative, AFailedVerifyNamesTheGatesThatRefusedIt) {
  const json r = {{"status", "failed"},
                  {"stage", "verify"},
                  {"gates", {gate("poisoned_outputs", "failed"), gate("correctness", "failed")}}};
  const Step s = judge_negative("n", "t", r, false);
  EXPECT_EQ(s.state, StepState::kPassed);
  EXPECT_THAT(s.detail, HasSubstr("poisoned_outputs; correctness"));
}

TEST(JudgeNegative, AJobThatBrokeIsAFailureNotARefusal) {
  const json r = {{"status", "error"}, {"stage", "load"}, {"error", "crashed"}};
  EXPECT_EQ(judge_negative("n", "t", r, false).state, StepState::kFailed);
}

TEST(JudgeNegative, TheBrokenCandidateMustBeRefusedAtTheBuildStage) {
  const json built = {{"status", "failed"}, {"stage", "build"}, {"error", "nvcc: error"}};
  const json later = {{"status", "failed"}, {"stage", "verify"}, {"error", "wrong"}};
  EXPECT_EQ(judge_negative("n", "t", built, true).state, StepState::kPassed);
  EXPECT_EQ(judge_negative("n", "t", later, true).state, StepState::kFailed);
}

TEST(GpuStepsNotRun, EveryGpuStepIsReportedNotRunWithWhy) {
  tasks::Task task;
  GpuInputs inputs{&task, "", "", {{WrongKind::kUnwritten, "unwritten", "w", ""}}, ""};
  const auto steps = gpu_steps_not_run(inputs, "not run (no GPU)");
  ASSERT_EQ(steps.size(), 5u);
  for (const auto& s : steps) {
    EXPECT_EQ(s.state, StepState::kNotRun);
    EXPECT_EQ(s.detail, "not run (no GPU)");
  }
  EXPECT_EQ(steps.back().id, "gpu_negative:unwritten");
}

TEST(GpuSteps, RunsTheStarterRepeatsTheBaselineAndEveryNegativeThroughTheJobRunner) {
  auto task = tasks::load_task(std::filesystem::path(KILN_TASKS_DIR) / "rmsnorm");
  ASSERT_TRUE(task) << task.error().message;
  GpuInputs inputs{&*task,
                   "starter",
                   "baseline",
                   {{WrongKind::kUnwritten, "unwritten", "w", "wrong"}},
                   "broken"};
  CheckOptions options;
  options.repeats = 2;
  std::vector<std::string> jobs;
  const auto steps = gpu_steps(inputs, options, [&](const json& body) -> Result<json> {
    const std::string source = body["candidate"]["source"];
    jobs.push_back(body["kind"].get<std::string>() + ":" + source);
    if (source == "broken") return json{{"status", "failed"}, {"stage", "build"}, {"error", "e"}};
    if (source == "wrong")
      return json{
          {"status", "failed"}, {"stage", "verify"}, {"gates", {gate("correctness", "failed")}}};
    return benchmark(10, 0.01, 12, 0.01);
  });
  // rmsnorm's baseline links no library, so it runs as a candidate too.
  EXPECT_THAT(jobs, ::testing::ElementsAre("benchmark:starter", "benchmark:starter",
                                           "benchmark:baseline", "verify:broken", "verify:wrong"));
  for (const auto& s : steps) EXPECT_EQ(s.state, StepState::kPassed) << s.id << ": " << s.detail;
}

TEST(GpuSteps, AJobThatCannotRunFailsItsStep) {
  auto task = tasks::load_task(std::filesystem::path(KILN_TASKS_DIR) / "fp16_gemm");
  ASSERT_TRUE(task);
  GpuInputs inputs{&*task, "starter", "baseline", {}, "broken"};
  CheckOptions options;
  options.repeats = 1;
  const auto steps = gpu_steps(inputs, options, [&](const json&) -> Result<json> {
    return make_error("no runner answered");
  });
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps[0].state, StepState::kFailed);
  EXPECT_THAT(steps[0].detail, HasSubstr("no runner answered"));
  // fp16_gemm's baseline links cuBLAS: judged through the starter's benchmark, which failed.
  EXPECT_EQ(steps[1].state, StepState::kFailed);
  EXPECT_THAT(steps[1].detail, HasSubstr("links cublas"));
}

}  // namespace
}  // namespace kiln::taskcheck

namespace kiln::taskcheck {
namespace {

// The stability budget: --max-cv over task.json's max_cv over the default, and the step judges
// with the one chosen.
TEST(StabilityBudget, OptionOverridesTheTaskWhichOverridesTheDefault) {
  tasks::Task task;
  CheckOptions options;
  std::string source;
  EXPECT_EQ(stability_budget(task, options, &source), kDefaultMaxCv);
  EXPECT_EQ(source, "default");
  task.max_cv = 0.12;
  EXPECT_EQ(stability_budget(task, options, &source), 0.12);
  EXPECT_EQ(source, "task.json max_cv");
  options.max_cv = 0.03;
  EXPECT_EQ(stability_budget(task, options, &source), 0.03);
  EXPECT_EQ(source, "--max-cv");
}

TEST(StabilityBudget, ANoisyTaskPassesWithinItsOwnBudgetAndFailsTheDefault) {
  nlohmann::json noisy = benchmark(10, 0.01, 12, 0.2);
  noisy["workloads"][0]["baseline_time_us"]["rel_noise"] = 0.08;
  tasks::Task task;
  task.max_cv = 0.1;
  const Step own = judge_stability("s", {noisy}, stability_budget(task, CheckOptions{}), true);
  EXPECT_EQ(own.state, StepState::kPassed) << own.detail;
  EXPECT_THAT(own.title, HasSubstr("10.00%"));
  task.max_cv.reset();
  const Step fallback = judge_stability("s", {noisy}, stability_budget(task, CheckOptions{}), true);
  EXPECT_EQ(fallback.state, StepState::kFailed);
}

}  // namespace
}  // namespace kiln::taskcheck
