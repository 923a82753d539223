// worker_result.h: the RESULT object, checked with the runner server's own validator
// (kiln::runner::check_result) so the two sides cannot drift apart.
#include "kiln/worker/worker_result.h"

#include <gtest/gtest.h>

#include <cmath>

#include "kiln/runner/result_check.h"

namespace kiln::worker {
namespace {

runner::ResultExpectations expectations(runner::JobKind kind,
                                        std::vector<std::string> requested = {}) {
  runner::ResultExpectations e;
  e.kind = kind;
  e.task_name = "fp16_gemm";
  e.task_sha256 = "taskhash";
  e.candidate_sha256 = "candhash";
  e.task_workloads = {"a", "b"};
  e.requested = std::move(requested);
  return e;
}

WorkerResult base(const std::string& kind) {
  WorkerResult r;
  r.kind = kind;
  r.task_name = "fp16_gemm";
  r.task_sha256 = "taskhash";
  r.candidate_sha256 = "candhash";
  r.task_workload_count = 2;
  r.job_workload_count = 2;
  r.gates.pass(gate::kBannedSymbols);
  r.gates.pass(gate::kCorrectness);
  return r;
}

// A job in which every gate of its kind ran and passed.
void pass_every_gate(WorkerResult& r) {
  for (auto name : required_gates(r.kind)) r.gates.pass(name);
}

WorkloadResult timed_row(const std::string& name, double candidate_us, double baseline_us) {
  WorkloadResult w;
  w.name = name;
  w.ran = true;
  w.passed = true;
  w.errors.checked = 10;
  w.time_us = SampleStatistics::summarize({candidate_us, candidate_us * 1.01, candidate_us * 0.99});
  w.baseline_time_us =
      SampleStatistics::summarize({baseline_us, baseline_us * 1.02, baseline_us * 0.98});
  w.speedup = w.baseline_time_us->median / w.time_us->median;
  w.throughput =
      PeakTable::throughput(1e12, 1e9, candidate_us * 1e-6, "f16", PeakTable::built_in("H200"));
  return w;
}

TEST(WorkerResult, APassedBenchmarkIsScoredAndValid) {
  WorkerResult r = base("benchmark");
  pass_every_gate(r);
  r.status = "passed";
  r.stage = "done";
  r.workloads = {timed_row("a", 2000, 1000), timed_row("b", 1000, 2000)};
  const nlohmann::json j = r.to_json();
  EXPECT_TRUE(j["summary"]["scored"]);
  EXPECT_NEAR(j["summary"]["geomean_speedup"].get<double>(), 1.0, 1e-9);
  EXPECT_EQ(j["summary"]["passed"], 2);
  EXPECT_FALSE(j.contains("error"));
  const auto problem = runner::check_result(j, expectations(runner::JobKind::kBenchmark));
  EXPECT_FALSE(problem.has_value()) << *problem;
}

TEST(WorkerResult, ABenchmarkBesideAnIncumbentCarriesTheRatiosTheServerChecks) {
  WorkerResult r = base("benchmark");
  pass_every_gate(r);
  r.status = "passed";
  r.stage = "done";
  r.incumbent_sha256 = "besthash";
  r.workloads = {timed_row("a", 2000, 1000), timed_row("b", 1000, 2000)};
  const double incumbent_us[] = {2200, 1000};  // 1.1x and 1.0x the candidate's time
  for (size_t i = 0; i < r.workloads.size(); ++i) {
    WorkloadResult& w = r.workloads[i];
    w.incumbent_time_us = SampleStatistics::summarize({incumbent_us[i]});
    w.speedup_vs_incumbent = w.incumbent_time_us->median / w.time_us->median;
  }
  const nlohmann::json j = r.to_json();
  EXPECT_EQ(j["incumbent"]["sha256"], "besthash");
  EXPECT_EQ(j["incumbent"]["workloads"], 2);
  EXPECT_NEAR(j["incumbent"]["speedup_geomean"].get<double>(), std::sqrt(1.1), 1e-9);
  EXPECT_NEAR(j["workloads"][0]["speedup_vs_incumbent"].get<double>(), 1.1, 1e-9);
  auto e = expectations(runner::JobKind::kBenchmark);
  e.incumbent_sha256 = "besthash";
  const auto problem = runner::check_result(j, e);
  EXPECT_FALSE(problem.has_value()) << *problem;
  // Without an incumbent the block is absent.
  r.incumbent_sha256.clear();
  EXPECT_FALSE(r.to_json().contains("incumbent"));
}

TEST(WorkerResult, ASubsetIsNotScored) {
  WorkerResult r = base("benchmark");
  r.status = "passed";
  r.job_workload_count = 1;
  r.workloads = {timed_row("a", 1000, 1000)};
  const nlohmann::json j = r.to_json();
  EXPECT_FALSE(j["summary"]["scored"]);
  EXPECT_EQ(j["summary"]["total"], 1);
  const auto problem = runner::check_result(j, expectations(runner::JobKind::kBenchmark, {"a"}));
  EXPECT_FALSE(problem.has_value()) << *problem;
}

TEST(WorkerResult, AFailedGateMakesAValidFailedResult) {
  WorkerResult r = base("verify");
  r.status = "failed";
  r.stage = "verify";
  r.error = "gate guard_bands failed: 16x4096x4096: 512 bytes after the end of C";
  r.gates.fail(gate::kGuardBands, "a", "512 bytes after the end of C");
  WorkloadResult a;
  a.name = "a";
  a.ran = true;
  a.failure = "guard_bands: ...";
  WorkloadResult b;
  b.name = "b";
  r.workloads = {a, b};
  const nlohmann::json j = r.to_json();
  EXPECT_FALSE(j["summary"]["scored"]);
  // Every gate of a verify job is listed, each with its state.
  ASSERT_EQ(j["gates"].size(), runner::protocol::kVerifyGates.size());
  for (const auto& gate : j["gates"]) {
    const std::string name = gate["name"];
    const std::string expected =
        name == "guard_bands"
            ? "failed"
            : (name == "banned_symbols" || name == "correctness" ? "passed" : "not_run");
    EXPECT_EQ(gate["state"], expected) << name;
  }
  const auto problem = runner::check_result(j, expectations(runner::JobKind::kVerify));
  EXPECT_FALSE(problem.has_value()) << *problem;
}

TEST(WorkerResult, AGateThatCouldNotRunLeavesAPassingBenchmarkUnscoredAndSaysWhy) {
  WorkerResult r = base("benchmark");
  pass_every_gate(r);
  r.gates.not_run(gate::kClockMonitoring, "NVML is unavailable");
  r.status = "passed";
  r.stage = "done";
  r.workloads = {timed_row("a", 2000, 1000), timed_row("b", 1000, 2000)};
  const nlohmann::json j = r.to_json();
  EXPECT_FALSE(j["summary"]["scored"]);
  ASSERT_EQ(j["summary"]["unscored_gates"].size(), 1u);
  EXPECT_EQ(j["summary"]["unscored_gates"][0], "clock_monitoring: not run: NVML is unavailable");
  const auto problem = runner::check_result(j, expectations(runner::JobKind::kBenchmark));
  EXPECT_FALSE(problem.has_value()) << *problem;
}

TEST(WorkerResult, ABenchmarkMissingAnyGateIsNeverScored) {
  for (auto skipped : runner::protocol::kBenchmarkGates) {
    WorkerResult r = base("benchmark");
    r.gates = GateLedger();
    for (auto name : runner::protocol::kBenchmarkGates)
      if (name != skipped) r.gates.pass(name);
    r.status = "passed";
    r.stage = "done";
    r.workloads = {timed_row("a", 2000, 1000), timed_row("b", 1000, 2000)};
    const nlohmann::json j = r.to_json();
    EXPECT_FALSE(j["summary"]["scored"]) << skipped;
    EXPECT_FALSE(runner::check_result(j, expectations(runner::JobKind::kBenchmark)).has_value())
        << skipped;
  }
}

TEST(WorkerResult, ABuildFailureIsValidWithNoRows) {
  WorkerResult r = base("benchmark");
  r.gates = GateLedger();
  r.gates.fail(gate::kBannedSymbols, "", "the candidate references `cublasGemmEx`");
  r.status = "failed";
  r.stage = "build";
  r.error = "banned symbols: ...";
  compiler::BuildOutcome build;
  build.error = "banned";
  r.build = build;
  const nlohmann::json j = r.to_json();
  EXPECT_EQ(j["workloads"].size(), 0u);
  EXPECT_TRUE(j.contains("build"));
  const auto problem = runner::check_result(j, expectations(runner::JobKind::kBenchmark));
  EXPECT_FALSE(problem.has_value()) << *problem;
}

TEST(WorkerResult, AnErrorResultNeedsOnlyItsIdentity) {
  WorkerResult r = base("benchmark");
  r.status = "error";
  r.error = "no CUDA GPU is usable here";
  const auto problem = runner::check_result(r.to_json(), expectations(runner::JobKind::kBenchmark));
  EXPECT_FALSE(problem.has_value()) << *problem;
}

TEST(WorkerResult, RowsCarryTheProtocolFields) {
  WorkloadResult w = timed_row("a", 1000, 1500);
  w.stop_reason = "converged";
  const nlohmann::json j = w.to_json();
  for (const char* key : {"name", "passed", "errors", "time_us", "baseline_time_us", "speedup",
                          "tflops", "gbps", "pct_of_peak", "stop"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_NEAR(j["speedup"].get<double>(), 1.5, 1e-9);
}

TEST(WorkerResult, GpuInfoSummarizesClocks) {
  GpuInfo gpu;
  gpu.name = "NVIDIA H200";
  gpu.sm_clock_mhz = {1980, 1965, 1755};
  gpu.throttle_reasons_seen = {"sw_power_cap"};
  gpu.peak = PeakTable::built_in(gpu.name);
  const nlohmann::json j = gpu.to_json();
  EXPECT_EQ(j["sm_clock_mhz"]["min"], 1755);
  EXPECT_EQ(j["sm_clock_mhz"]["median"], 1965);
  EXPECT_EQ(j["throttle_reasons_seen"][0], "sw_power_cap");
  EXPECT_EQ(j["peak"]["hbm_gbps"], 4800);
}

}  // namespace
}  // namespace kiln::worker
