// check_result: what the server refuses to pass on from a worker.
#include "kiln/runner/result_check.h"

#include <gmock/gmock.h>

#include <cmath>
#include <stdexcept>

#include "kiln/runner/protocol/gates.h"

namespace kiln::runner {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

const std::string kTask(64, 't');
const std::string kCandidate(64, 'c');

ResultExpectations expectations() {
  ResultExpectations e;
  e.kind = JobKind::kBenchmark;
  e.task_name = "gemm";
  e.task_sha256 = kTask;
  e.candidate_sha256 = kCandidate;
  e.task_workloads = {"a", "b"};
  return e;
}

json row(const std::string& name, double median, double speedup = 1.25) {
  auto timing = [](double m) {
    return json{{"median", m}, {"p5", m * 0.9}, {"p95", m * 1.1}, {"cv", 0.01}, {"samples", 12}};
  };
  return {{"name", name},
          {"passed", true},
          {"errors", {{"max_abs", 0.0}, {"mismatches", 0}}},
          {"time_us", timing(median)},
          {"baseline_time_us", timing(median * speedup)},
          {"speedup", speedup},
          {"tflops", 100.0},
          {"pct_of_peak", 10.0}};
}

// Every gate a scored benchmark must carry (runner/protocol/gates.h), passed.
json every_gate_passed() {
  json gates = json::array();
  for (auto name : protocol::kBenchmarkGates)
    gates.push_back({{"name", name}, {"state", "passed"}, {"passed", true}});
  return gates;
}

json& gate_named(json& result, std::string_view name) {
  for (auto& gate : result["gates"])
    if (gate["name"] == name) return gate;
  throw std::out_of_range("no gate " + std::string(name));
}

json passing() {
  return {{"status", "passed"},
          {"stage", "done"},
          {"task", {{"name", "gemm"}, {"sha256", kTask}}},
          {"candidate_sha256", kCandidate},
          {"gates", every_gate_passed()},
          {"workloads", json::array({row("a", 10), row("b", 20)})},
          {"summary", {{"passed", 2}, {"total", 2}, {"scored", true}, {"geomean_speedup", 1.25}}}};
}

std::string problem(const json& result, const ResultExpectations& e = expectations()) {
  return check_result(result, e).value_or("");
}

TEST(ResultCheck, AcceptsAConsistentResult) { EXPECT_EQ(problem(passing()), ""); }

// A benchmark timed beside an incumbent: each row's ratio against it, and their geomean.
json beside_incumbent(const std::string& incumbent_sha256) {
  json result = passing();
  for (auto& r : result["workloads"]) {
    const double median = r["time_us"]["median"].get<double>();
    r["incumbent_time_us"] = {{"median", median * 1.2},
                              {"p5", median},
                              {"p95", median * 1.3},
                              {"cv", 0.01},
                              {"samples", 12}};
    r["speedup_vs_incumbent"] = 1.2;
  }
  result["incumbent"] = {{"sha256", incumbent_sha256}, {"speedup_geomean", 1.2}, {"workloads", 2}};
  return result;
}

TEST(ResultCheck, ChecksTheRatiosAgainstTheIncumbent) {
  const std::string incumbent(64, 'i');
  ResultExpectations e = expectations();
  e.incumbent_sha256 = incumbent;
  EXPECT_EQ(problem(beside_incumbent(incumbent), e), "");
  // Another incumbent than the job's.
  EXPECT_THAT(problem(beside_incumbent(std::string(64, 'x')), e),
              HasSubstr("result.incumbent.sha256 is not this job's incumbent"));
  // A row whose ratio is not its two medians'.
  json lie = beside_incumbent(incumbent);
  lie["workloads"][0]["speedup_vs_incumbent"] = 3.0;
  EXPECT_THAT(problem(lie, e), HasSubstr("speedup_vs_incumbent 3.0 differs"));
  // A geomean that is not the rows'.
  lie = beside_incumbent(incumbent);
  lie["incumbent"]["speedup_geomean"] = 1.5;
  EXPECT_THAT(problem(lie, e), HasSubstr("result.incumbent.speedup_geomean 1.5 differs"));
  // A job that timed no incumbent carries none.
  EXPECT_THAT(problem(beside_incumbent(incumbent)), HasSubstr("this job timed no incumbent"));
  json missing = passing();
  EXPECT_THAT(problem(missing, e), HasSubstr("incumbent"));
}

TEST(ResultCheck, RefusesAScoreWhenAGateIsMissing) {
  for (auto name : protocol::kBenchmarkGates) {
    json r = passing();
    auto& gates = r["gates"];
    for (size_t i = 0; i < gates.size(); ++i)
      if (gates[i]["name"] == name) gates.erase(i);
    EXPECT_THAT(problem(r), HasSubstr("gate " + std::string(name) + " is missing")) << name;
  }
}

TEST(ResultCheck, RefusesAScoreWhenAGateDidNotRun) {
  json r = passing();
  gate_named(r, protocol::gate::kClockMonitoring) = {
      {"name", "clock_monitoring"}, {"state", "not_run"}, {"passed", false}, {"detail", "no NVML"}};
  EXPECT_THAT(problem(r), HasSubstr("gate clock_monitoring is missing or did not pass"));
}

TEST(ResultCheck, AcceptsAnUnscoredPassWhoseGateDidNotRun) {
  json r = passing();
  gate_named(r, protocol::gate::kActivityRecord) = {
      {"name", "activity_record"}, {"state", "not_run"}, {"passed", false}, {"detail", "no CUPTI"}};
  r["summary"]["scored"] = false;
  r["summary"]["geomean_speedup"] = nullptr;
  EXPECT_EQ(problem(r), "");
}

TEST(ResultCheck, RefusesAGateListedTwiceOrWithAStateThatDisagrees) {
  json twice = passing();
  twice["gates"].push_back(twice["gates"][0]);
  EXPECT_THAT(problem(twice), HasSubstr("appears twice"));
  json disagree = passing();
  gate_named(disagree, protocol::gate::kCorrectness)["state"] = "not_run";
  EXPECT_THAT(problem(disagree), HasSubstr("disagrees with passed"));
  json unknown = passing();
  gate_named(unknown, protocol::gate::kCorrectness)["state"] = "skipped";
  EXPECT_THAT(problem(unknown), HasSubstr("is not passed, failed or not_run"));
}

TEST(ResultCheck, RefusesAResultForAnotherJob) {
  json r = passing();
  r["task"]["sha256"] = std::string(64, 'x');
  EXPECT_THAT(problem(r), HasSubstr("result.task.sha256"));
  r = passing();
  r["candidate_sha256"] = std::string(64, 'x');
  EXPECT_THAT(problem(r), HasSubstr("candidate_sha256"));
  r = passing();
  r["task"]["name"] = "other";
  EXPECT_THAT(problem(r), HasSubstr("result.task.name"));
}

TEST(ResultCheck, RefusesMalformedNumbers) {
  json r = passing();
  r["workloads"][0]["time_us"]["median"] = -3;
  EXPECT_THAT(problem(r), HasSubstr("time_us.median"));
  r = passing();
  r["workloads"][0]["time_us"]["p5"] = 99;
  EXPECT_THAT(problem(r), HasSubstr("p5 <= median <= p95"));
  r = passing();
  r["workloads"][1]["time_us"]["samples"] = 0;
  EXPECT_THAT(problem(r), HasSubstr("samples"));
  r = passing();
  r["workloads"][0]["tflops"] = "fast";
  EXPECT_THAT(problem(r), HasSubstr("tflops"));
  r = passing();
  r["workloads"][0]["pct_of_peak"] = 250;
  EXPECT_THAT(problem(r), HasSubstr("peak"));
  r = passing();
  r["workloads"][0]["errors"]["mismatches"] = -1;
  EXPECT_THAT(problem(r), HasSubstr("mismatches"));
}

TEST(ResultCheck, RefusesASpeedupTheMediansContradict) {
  json r = passing();
  r["workloads"][0]["speedup"] = 2.0;
  EXPECT_THAT(problem(r), HasSubstr("speedup"));
}

TEST(ResultCheck, RefusesASummaryTheRowsContradict) {
  json r = passing();
  r["summary"]["geomean_speedup"] = 1.5;
  EXPECT_THAT(problem(r), HasSubstr("geomean"));
  r = passing();
  r["summary"]["passed"] = 1;
  EXPECT_THAT(problem(r), HasSubstr("summary.passed"));
  r = passing();
  r["summary"]["total"] = 3;
  EXPECT_THAT(problem(r), HasSubstr("summary.total"));
}

TEST(ResultCheck, RefusesAPassWithAFailedGateOrWorkload) {
  json r = passing();
  r["gates"][0]["passed"] = false;
  r["gates"][0]["state"] = "failed";
  EXPECT_THAT(problem(r), HasSubstr("gate failed"));
  r["gates"][0].erase("state");  // a worker of before states, passed: false alone is a failure
  EXPECT_THAT(problem(r), HasSubstr("gate failed"));
  r = passing();
  r["workloads"][1] = {{"name", "b"}, {"passed", false}};
  r["summary"]["passed"] = 1;
  r["summary"]["scored"] = false;
  EXPECT_THAT(problem(r), HasSubstr("workload failed"));
  r = passing();
  r["workloads"].erase(1);
  r["summary"]["passed"] = 1;
  EXPECT_THAT(problem(r), HasSubstr("did not run"));
}

TEST(ResultCheck, RefusesWorkloadsTheJobDidNotAskFor) {
  json r = passing();
  r["workloads"][1]["name"] = "z";
  EXPECT_THAT(problem(r), HasSubstr("'z'"));
  r = passing();
  r["workloads"][1]["name"] = "a";
  EXPECT_THAT(problem(r), HasSubstr("twice"));
}

TEST(ResultCheck, ScoresOnlyWhenEveryTaskWorkloadRan) {
  ResultExpectations subset = expectations();
  subset.requested = {"a"};
  json r = passing();
  r["workloads"].erase(1);
  r["summary"] = {{"passed", 1}, {"total", 1}, {"scored", true}, {"geomean_speedup", 1.25}};
  EXPECT_THAT(problem(r, subset), HasSubstr("scored"));
  r["summary"]["scored"] = false;
  EXPECT_EQ(problem(r, subset), "");
}

TEST(ResultCheck, AcceptsAnHonestFailure) {
  json r = passing();
  r["status"] = "failed";
  r["error"] = "workload b: 3 mismatches";
  r["workloads"][1] = {
      {"name", "b"}, {"passed", false}, {"errors", {{"max_abs", 0.5}, {"mismatches", 3}}}};
  r["summary"] = {{"passed", 1}, {"total", 2}, {"scored", false}, {"geomean_speedup", nullptr}};
  EXPECT_EQ(problem(r), "");
  r.erase("error");  // the rows say what failed
  EXPECT_EQ(problem(r), "");
}

TEST(ResultCheck, RefusesAFailureWhereEverythingPassed) {
  json r = passing();
  r["status"] = "failed";
  r["error"] = "?";
  r["summary"]["scored"] = false;
  EXPECT_THAT(problem(r), HasSubstr("every gate and workload passed"));
}

TEST(ResultCheck, AnErrorNeedsOnlyItsIdentityAndMessage) {
  json r = {{"status", "error"},
            {"stage", "build"},
            {"error", "nvcc failed"},
            {"task", {{"name", "gemm"}, {"sha256", kTask}}},
            {"candidate_sha256", kCandidate}};
  EXPECT_EQ(problem(r), "");
  r["error"] = "";
  EXPECT_THAT(problem(r), HasSubstr("result.error"));
  r["status"] = "exploded";
  EXPECT_THAT(problem(r), HasSubstr("status"));
}

TEST(ResultCheck, ProfileResultsNameTheirWorkloadAndKernels) {
  ResultExpectations e = expectations();
  e.kind = JobKind::kProfile;
  e.profile_workload = "a";
  json r = {
      {"status", "passed"},
      {"stage", "done"},
      {"task", {{"name", "gemm"}, {"sha256", kTask}}},
      {"candidate_sha256", kCandidate},
      {"profile",
       {{"workload", "a"}, {"kernels", json::array({{{"name", "k"}, {"metrics", {{"x", 1}}}}})}}}};
  EXPECT_EQ(problem(r, e), "");
  r["profile"]["workload"] = "b";
  EXPECT_THAT(problem(r, e), HasSubstr("profile.workload"));
  r["profile"]["workload"] = "a";
  r["profile"]["kernels"][0].erase("name");
  EXPECT_THAT(problem(r, e), HasSubstr("kernels[0].name"));
}

TEST(ResultCheck, ErrorResultsOfTheServerNameStageAndReason) {
  json r =
      make_error_result(expectations(), "timing", Failure::kTimeout, "timeout: ...", "last words");
  EXPECT_EQ(r["status"], "error");
  EXPECT_EQ(r["stage"], "timing");
  EXPECT_EQ(r["reason"], "timeout");
  EXPECT_EQ(r["log_tail"], "last words");
  EXPECT_EQ(problem(r), "");  // it passes its own check
}

}  // namespace
}  // namespace kiln::runner
