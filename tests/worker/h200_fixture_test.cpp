// What the H200 really printed (tests/worker/fixtures/h200, captured 2026-11-29 with
// CUDA 13.0, driver 580.159.04, ncu and compute-sanitizer 2025.3.1): the parsers read
// it, and every captured worker result passes the runner server's own result check.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kiln/runner/result_check.h"
#include "kiln/tasks/task.h"
#include "kiln/worker/ncu_report.h"
#include "kiln/worker/sanitizer_report.h"
#include "worker_test_support.h"

namespace kiln::worker {
namespace {

std::filesystem::path fixtures() {
  return testing::source_dir() / "tests" / "worker" / "fixtures" / "h200";
}

TEST(H200Fixtures, NcuRawPageOfTheGemmStarter) {
  std::string error;
  const auto kernels =
      NcuReport::parse(testing::read_text(fixtures() / "ncu_raw_fp16_gemm_starter.csv"), &error);
  ASSERT_EQ(kernels.size(), 1u) << error;
  const NcuKernel& k = kernels[0];
  EXPECT_NE(k.name.find("gemm_tn_kernel"), std::string::npos);
  EXPECT_EQ(k.grid, "(128, 32, 1)");
  EXPECT_NEAR(k.duration_us, 3327.776, 1e-6);
  EXPECT_EQ(k.registers, 40);
  EXPECT_EQ(k.shared_static_bytes, 8448);
  EXPECT_NEAR(k.achieved_occupancy_pct, 69.85, 1e-9);
  EXPECT_NEAR(k.theoretical_occupancy_pct, 75, 1e-9);
  EXPECT_NEAR(k.dram_pct, 0.76, 1e-9);  // gpu__dram_throughput in ncu 2025
  EXPECT_NEAR(k.l2_pct, 6.37, 1e-9);
  EXPECT_NEAR(k.sm_pct, 85.61, 1e-9);
  EXPECT_EQ(k.tensor_metric, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active");
  EXPECT_NEAR(k.tensor_pct, 0.74, 1e-9);
  ASSERT_FALSE(k.top_stalls.empty());
  EXPECT_EQ(k.top_stalls[0].reason, "long_scoreboard");
}

TEST(H200Fixtures, MemcheckOfTheOutOfBoundsCheat) {
  const SanitizerReport report = SanitizerReport::parse(
      testing::read_text(fixtures() / "sanitize_memcheck_out_of_bounds.txt"), "memcheck");
  EXPECT_EQ(report.error_summary, 4097);  // not the "3897 errors were not printed" line
  ASSERT_EQ(report.findings.size(), 1u);  // four reports of one write, merged
  const SanitizerFinding& f = report.findings[0];
  EXPECT_EQ(f.kind, "Invalid __global__ write of size 2 bytes");
  EXPECT_EQ(f.kernel, "scribble_past_end(__half *, long, long)");
  EXPECT_EQ(f.file, "kernel.cu");
  EXPECT_EQ(f.line, 8);
  EXPECT_EQ(f.count, 4);
  EXPECT_EQ(f.address, "0x7f5c04a410c0");  // "Access to 0x... is out of bounds"
  EXPECT_NE(f.detail.find("after the nearest allocation"), std::string::npos);
  EXPECT_FALSE(report.tool_failed);
}

TEST(H200Fixtures, InitcheckOfTheUninitializedReadCheat) {
  const SanitizerReport report = SanitizerReport::parse(
      testing::read_text(fixtures() / "sanitize_initcheck_uninitialized.txt"), "initcheck");
  EXPECT_EQ(report.error_summary, 257);
  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_EQ(report.findings[0].kind, "Uninitialized __global__ memory read of size 4 bytes");
  EXPECT_EQ(report.findings[0].kernel,
            "atomicAdd(float *, float)");  // the inlined frame ptxas keeps
  EXPECT_EQ(report.findings[0].line, 84);
}

TEST(H200Fixtures, CleanRacecheck) {
  const SanitizerReport report = SanitizerReport::parse(
      testing::read_text(fixtures() / "sanitize_racecheck_clean.txt"), "racecheck");
  EXPECT_TRUE(report.findings.empty());
  EXPECT_FALSE(report.tool_failed);
}

// The rmsnorm candidate with __syncthreads() inside `if (threadIdx.x < half)`
// (tests/corpus/sanitize/rmsnorm_barrier_in_branch.cu), synccheck on the H200, 2026-11-29.
TEST(H200Fixtures, SynccheckOfABarrierInABranch) {
  const SanitizerReport report = SanitizerReport::parse(
      testing::read_text(fixtures() / "sanitize_synccheck_barrier_in_branch.txt"), "synccheck");
  EXPECT_EQ(report.error_summary, 62);
  ASSERT_FALSE(report.findings.empty());
  int reports = 0;
  for (const SanitizerFinding& f : report.findings) {
    EXPECT_EQ(f.kind, "Barrier error detected. Divergent thread(s) in warp.");
    EXPECT_EQ(f.file, "kernel.cu");
    EXPECT_EQ(f.line, 32);
    reports += f.count;
  }
  EXPECT_EQ(reports, 62);
}

// The same candidate without the barrier between the reduction's steps
// (tests/corpus/sanitize/rmsnorm_missing_barrier.cu), racecheck on the H200, 2026-11-29.
TEST(H200Fixtures, RacecheckOfAMissingBarrier) {
  const SanitizerReport report = SanitizerReport::parse(
      testing::read_text(fixtures() / "sanitize_racecheck_missing_barrier.txt"), "racecheck");
  ASSERT_FALSE(report.findings.empty());
  int errors = 0;
  for (const SanitizerFinding& f : report.findings) {
    EXPECT_EQ(f.kind.rfind("Race reported between", 0), 0u) << f.kind;
    EXPECT_EQ(f.line, 30);
    errors += f.severity == "error";
  }
  EXPECT_GT(errors, 0);
}

runner::JobKind kind_of(const std::string& kind) {
  if (kind == "verify") return runner::JobKind::kVerify;
  if (kind == "profile") return runner::JobKind::kProfile;
  if (kind == "sanitize") return runner::JobKind::kSanitize;
  return runner::JobKind::kBenchmark;
}

TEST(H200Fixtures, EveryCapturedResultPassesTheServerCheck) {
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(fixtures())) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("result_", 0) != 0) continue;
    SCOPED_TRACE(name);
    const nlohmann::json doc = nlohmann::json::parse(testing::read_text(entry.path()));
    const nlohmann::json& job = doc["job"];
    const nlohmann::json& result = doc["result"];
    auto task = tasks::load_task(testing::source_dir() / "tasks" / job["task"].get<std::string>());
    ASSERT_TRUE(task.ok());
    runner::ResultExpectations expect;
    expect.kind = kind_of(job["kind"]);
    expect.task_name = task->name;
    expect.task_sha256 = result["task"]["sha256"];  // the bundle as it was when measured
    expect.candidate_sha256 = result["candidate_sha256"];
    for (const auto& w : task->workloads) expect.task_workloads.push_back(w.name);
    expect.requested = job["workloads"].get<std::vector<std::string>>();
    if (job.contains("profile")) expect.profile_workload = job["profile"]["workload"];
    const auto problem = runner::check_result(result, expect);
    EXPECT_FALSE(problem.has_value()) << *problem;
    ++checked;
  }
  EXPECT_GE(checked, 9);
}

TEST(H200Fixtures, CheatResultsNameTheirGate) {
  const std::pair<const char*, const char*> cases[] = {
      {"result_cheat-private_stream.json", "hidden_stream_work"},
      {"result_cheat-background_thread.json", "hidden_stream_work"},
      {"result_cheat-calls_cublas.json", "banned_symbols"},
      {"result_cheat-benchmark_fast_path.json", "fresh_inputs"}};
  for (const auto& [file, gate] : cases) {
    SCOPED_TRACE(file);
    const nlohmann::json result =
        nlohmann::json::parse(testing::read_text(fixtures() / file))["result"];
    EXPECT_EQ(result["status"], "failed");
    bool found = false;
    for (const auto& g : result["gates"])
      found = found || (g["name"] == gate && !g["passed"].get<bool>());
    EXPECT_TRUE(found) << result["gates"].dump();
  }
}

}  // namespace
}  // namespace kiln::worker
