// The benchmark tool end to end: a job on the (fake) runner, progress, the stored
// result, the text table, candidate paths, and the errors an agent must be able to act on.
#include <gmock/gmock.h>
#include <unistd.h>

#include <thread>

#include "kiln/base/file.h"
#include "kiln/frontier/result_store.h"
#include "kiln/runner/protocol/gates.h"
#include "tool_fixture.h"

namespace kiln::runner {
namespace {

using namespace kiln::runner::testing;
using ::testing::HasSubstr;
using ::testing::Not;

class BenchmarkToolTest : public ToolTest {};

TEST_F(BenchmarkToolTest, PassingCandidateIsStoredUnderItsResultId) {
  start();
  auto result = call("benchmark", {{"source", fake_source("pass")}});
  ASSERT_FALSE(result.is_error) << result.text;
  const json& out = result.structured;
  EXPECT_EQ(out["status"], "passed");
  EXPECT_EQ(out["runner"], runner_->url());
  ASSERT_TRUE(out.contains("result_id")) << out.dump();
  EXPECT_EQ(out["summary"]["scored"], true);
  EXPECT_EQ(out["workloads"].size(), bundled_task().workloads.size());

  auto store = frontier::ResultStore::open(run_dir_ / "results.sqlite");
  ASSERT_TRUE(store.ok()) << store.error().message;
  auto stored = (*store)->find(out["result_id"]);
  ASSERT_TRUE(stored.ok());
  ASSERT_TRUE(stored->has_value());
  EXPECT_EQ((*stored)->status, "passed");
  EXPECT_TRUE((*stored)->scored);
  EXPECT_NEAR((*stored)->geomean_speedup.value_or(0), 1.1, 1e-9);
  EXPECT_EQ((*stored)->task_sha256, bundled_task().sha256);
  EXPECT_EQ((*stored)->job_id, out["job_id"]);
  EXPECT_EQ((*stored)->result["workloads"], out["workloads"]);
  auto source = (*store)->candidate_source((*stored)->candidate_sha256);
  ASSERT_TRUE(source.ok() && source->has_value());
  EXPECT_EQ(**source, fake_source("pass"));
}

TEST_F(BenchmarkToolTest, TextIsACompactTableWithTheSummary) {
  start();
  auto result = call("benchmark", {{"source", fake_source("pass")}});
  ASSERT_FALSE(result.is_error) << result.text;
  EXPECT_LT(result.text.size(), 10000u);
  EXPECT_LT(result.structured.dump().size(), 10000u);
  EXPECT_THAT(result.text, HasSubstr("PASSED 10/10 workloads, geomean speedup 1.100x, scored"));
  EXPECT_THAT(result.text, HasSubstr(result.structured["result_id"].get<std::string>()));
  EXPECT_THAT(result.text, HasSubstr("4096x4096x4096"));
  EXPECT_THAT(result.text, HasSubstr("median_us"));
  EXPECT_THAT(result.text, HasSubstr("1.100x"));
  EXPECT_THAT(result.text,
              HasSubstr("gates: " + std::to_string(runner::protocol::kBenchmarkGates.size()) + "/" +
                        std::to_string(runner::protocol::kBenchmarkGates.size()) + " passed"));
  EXPECT_THAT(result.text, HasSubstr("record_candidate"));
}

TEST_F(BenchmarkToolTest, ReportsIncreasingProgressPerWorkload) {
  start();
  auto result = call("benchmark", {{"source", fake_source("pass")}});
  ASSERT_FALSE(result.is_error) << result.text;
  auto progress = notes("notifications/progress");
  size_t per_workload = 0;
  double last = -1;
  for (const auto& note : progress) {
    double value = note["params"]["progress"];
    EXPECT_GT(value, last);
    last = value;
    EXPECT_EQ(note["params"]["progressToken"], "progress-1");
    if (note["params"].value("message", "").find("workload ") == 0) ++per_workload;
  }
  EXPECT_EQ(per_workload, bundled_task().workloads.size());
  EXPECT_DOUBLE_EQ(last, 10.0);  // never past the total
  EXPECT_EQ(progress.back()["params"]["total"], 10.0);
}

TEST_F(BenchmarkToolTest, FailingCandidateIsAnErrorWithItsNumbersAndAResultId) {
  start();
  auto result = call("benchmark", {{"source", fake_source("fail")},
                                   {"workloads", {"16x4096x4096", "1024x4096x4096"}}});
  EXPECT_TRUE(result.is_error);
  EXPECT_EQ(result.structured["status"], "failed");
  EXPECT_TRUE(result.structured.contains("result_id"));
  EXPECT_THAT(result.text, HasSubstr("FAILED 1/2"));
  EXPECT_THAT(result.text, HasSubstr("FAIL   max_abs 0.5"));
  EXPECT_THAT(result.text, HasSubstr("expected 1.5 got 0.25"));
  EXPECT_THAT(result.text, HasSubstr("gate correctness FAILED"));
  EXPECT_THAT(result.text, HasSubstr("simulate"));
  // The same facts, structured: which gate, which workload, the errors, what to do.
  const json& error = result.structured["error"];
  EXPECT_EQ(error["code"], "wrong_answer");
  EXPECT_THAT(error["message"].get<std::string>(), HasSubstr("gate(s) correctness"));
  EXPECT_THAT(error["message"].get<std::string>(), HasSubstr("1/2 workloads passed"));
  EXPECT_THAT(error["message"].get<std::string>(), HasSubstr("workload 16x4096x4096"));
  EXPECT_THAT(error["next_step"].get<std::string>(), HasSubstr("simulate"));
  EXPECT_THAT(result.text, HasSubstr(error["message"].get<std::string>()));
}

TEST_F(BenchmarkToolTest, ASubsetOfWorkloadsIsNotScored) {
  start();
  auto result =
      call("benchmark", {{"source", fake_source("pass")}, {"workloads", {"16x4096x4096"}}});
  ASSERT_FALSE(result.is_error) << result.text;
  EXPECT_EQ(result.structured["summary"]["scored"], false);
  EXPECT_THAT(result.text, HasSubstr("not scored"));
  EXPECT_THAT(result.text, HasSubstr("without `workloads`"));
}

TEST_F(BenchmarkToolTest, AGateThatCouldNotRunIsShownAndLeavesTheResultUnscored) {
  start();
  auto result = call("benchmark", {{"source", fake_source("no_cupti")}});
  ASSERT_FALSE(result.is_error) << result.text;
  EXPECT_EQ(result.structured["status"], "passed");
  EXPECT_EQ(result.structured["summary"]["scored"], false);
  EXPECT_THAT(result.text, HasSubstr("not scored"));
  EXPECT_THAT(
      result.text,
      HasSubstr("gates: " + std::to_string(runner::protocol::kBenchmarkGates.size() - 2) + "/" +
                std::to_string(runner::protocol::kBenchmarkGates.size()) + " passed, 2 not run"));
  EXPECT_THAT(result.text, HasSubstr("gate activity_record NOT RUN: not run: CUPTI unavailable"));
  EXPECT_THAT(result.text, HasSubstr("gate hidden_stream_work NOT RUN"));
  EXPECT_THAT(result.text, HasSubstr("not scored because a gate could not run"));
  EXPECT_THAT(result.text, Not(HasSubstr("record_candidate")));
  bool shown = false;
  for (const auto& gate : result.structured["gates"])
    if (gate["name"] == "activity_record") shown = gate["state"] == "not_run";
  EXPECT_TRUE(shown) << result.structured.dump();
}

TEST_F(BenchmarkToolTest, AScoreClaimedWithoutEveryGateIsRefusedByTheRunner) {
  start();
  auto result = call("benchmark", {{"source", fake_source("lie_scored")}});
  EXPECT_TRUE(result.is_error);
  EXPECT_THAT(result.text, HasSubstr("clock_monitoring"));
}

TEST_F(BenchmarkToolTest, WorkerCrashIsAnErrorNamingTheSignal) {
  start();
  auto result =
      call("benchmark", {{"source", fake_source("crash")}, {"workloads", {"16x4096x4096"}}});
  EXPECT_TRUE(result.is_error);
  EXPECT_THAT(result.text, HasSubstr("ERROR in stage verify"));
  EXPECT_THAT(result.text, HasSubstr("SIGSEGV"));
  EXPECT_TRUE(result.structured.contains("result_id"));
}

TEST_F(BenchmarkToolTest, BuildErrorsShowTheBuildLog) {
  start();
  auto result = call("benchmark", {{"source", fake_source("build_error")}});
  EXPECT_TRUE(result.is_error);
  EXPECT_THAT(result.text, HasSubstr("ERROR in stage build"));
  EXPECT_EQ(result.structured["error"]["code"], "compile_error");
  EXPECT_THAT(result.text, HasSubstr("build log:"));
  EXPECT_THAT(result.text, HasSubstr("expected a \";\""));
}

TEST_F(BenchmarkToolTest, ReadsACandidateInsideTheRunDirectory) {
  start();
  std::filesystem::create_directories(run_dir_ / "worktree" / "candidates");
  ASSERT_TRUE(
      write_file(run_dir_ / "worktree" / "candidates" / "kernel.cu", fake_source("pass")).ok());
  auto result = call("benchmark", {{"candidate", "worktree/candidates/kernel.cu"},
                                   {"workloads", {"16x4096x4096"}}});
  ASSERT_FALSE(result.is_error) << result.text;
  auto store = frontier::ResultStore::open(run_dir_ / "results.sqlite");
  auto stored = (*store)->find(result.structured["result_id"]);
  EXPECT_EQ((*stored)->source_path, "worktree/candidates/kernel.cu");
  auto absolute =
      call("benchmark", {{"candidate", (run_dir_ / "worktree/candidates/kernel.cu").string()},
                         {"workloads", {"16x4096x4096"}}});
  EXPECT_FALSE(absolute.is_error) << absolute.text;
}

TEST_F(BenchmarkToolTest, RefusesPathsOutsideTheRunDirectory) {
  start();
  TempDir elsewhere;
  ASSERT_TRUE(write_file(elsewhere / "kernel.cu", fake_source("pass")).ok());
  std::filesystem::create_symlink(elsewhere / "kernel.cu", run_dir_ / "link.cu");
  for (const std::string& path :
       {(elsewhere / "kernel.cu").string(),
        std::string("../") + elsewhere.path().filename().string() + "/kernel.cu",
        std::string("link.cu"), std::string("/etc/passwd")}) {
    auto result = call("benchmark", {{"candidate", path}});
    EXPECT_TRUE(result.is_error) << path;
    EXPECT_THAT(result.text, HasSubstr("outside the run directory")) << path;
  }
  EXPECT_EQ(runner_->get("/v1/health")["jobs_running"], 0);
}

TEST_F(BenchmarkToolTest, WantsExactlyOneOfCandidateAndSource) {
  start();
  auto neither = call("benchmark", json::object());
  EXPECT_TRUE(neither.is_error);
  EXPECT_THAT(neither.text, HasSubstr("exactly one"));
  auto both = call("benchmark", {{"source", "x"}, {"candidate", "kernel.cu"}});
  EXPECT_TRUE(both.is_error);
  auto missing = call("benchmark", {{"candidate", "nope.cu"}});
  EXPECT_TRUE(missing.is_error);
  EXPECT_THAT(missing.text, HasSubstr("not a file"));
}

TEST_F(BenchmarkToolTest, UnknownWorkloadIsRefusedBeforeAnyJob) {
  start();
  auto result = call("benchmark", {{"source", fake_source("pass")}, {"workloads", {"7x7x7"}}});
  EXPECT_TRUE(result.is_error);
  EXPECT_THAT(result.text, HasSubstr("4096x4096x4096"));
}

TEST_F(BenchmarkToolTest, WithoutARunnerSaysHowToConfigureOne) {
  start(/*with_runner=*/false);
  auto result = call("benchmark", {{"source", fake_source("pass")}});
  EXPECT_TRUE(result.is_error);
  EXPECT_THAT(result.text, HasSubstr("kiln runner --gpus"));
  EXPECT_THAT(result.text, HasSubstr("KILN_RUNNER=http://"));
  EXPECT_THAT(result.text, HasSubstr("KILN_RUNNER_TOKEN"));
}

TEST_F(BenchmarkToolTest, CancellingTheCallCancelsTheJob) {
  start();
  std::thread canceller([this] {
    eventually([this] {
      for (const auto& note : notes("notifications/progress"))
        if (note["params"].value("message", "") == "stage timing") return true;
      return false;
    });
    cancelled_->store(true);
  });
  auto result = call("benchmark", {{"source", fake_source("hang")}});
  canceller.join();
  EXPECT_TRUE(result.is_error);
  EXPECT_EQ(result.structured["status"], "cancelled");
  EXPECT_THAT(result.text, HasSubstr("cancelled"));
  EXPECT_FALSE(result.structured.contains("result_id"));
  json job = runner_->get("/v1/jobs/" + result.structured["job_id"].get<std::string>());
  EXPECT_EQ(job["state"], "cancelled");
  EXPECT_TRUE(process_gone(runner_->worker_pid(job["id"])));
}

TEST_F(BenchmarkToolTest, DeclarationPassesTheRegistryRules) {
  start(false);
  json list = server_.tools().list();
  bool found = false;
  for (const auto& tool : list["tools"]) {
    if (tool["name"] != "benchmark") continue;
    found = true;
    EXPECT_EQ(tool["annotations"]["readOnlyHint"], true);
    EXPECT_EQ(tool["annotations"]["openWorldHint"], true);
    EXPECT_EQ(tool["annotations"]["idempotentHint"], false);
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace kiln::runner
