// record_candidate and list_frontier through a server built as `kiln mcp --run-dir` builds
// it: a benchmark on the fake runner, recorded (revalidated through the same runner path),
// copied and committed in the run's worktree; refusals an agent must be able to act on; the
// listing and kiln://frontier under 10 KB.
#include <gmock/gmock.h>

#include "kiln/frontier/result_store.h"
#include "kiln/frontier/run_frontier.h"
#include "kiln/frontier/worktree.h"
#include "tool_fixture.h"

namespace kiln::runner {
namespace {

using namespace kiln::runner::testing;
using ::testing::HasSubstr;

class RecordCandidateTest : public ToolTest {
 protected:
  void SetUp() override {
    kiln::testing::write_text(
        run_dir_ / "worktree" / "candidates" / "fp16_gemm" / "scratch" / "kernel.cu",
        "// starter\n");
    ASSERT_TRUE(frontier::Worktree(run_dir_ / "worktree").init("run").ok());
  }
  void configure(tools::ToolboxConfig& config) override {
    config.tasks_dir = KILN_TASKS_DIR;
    config.ptx_hasher = std::make_shared<FixedPtx>();
  }
  std::string benchmark(const std::string& mode, const std::string& tag = "") {
    std::string source = fake_source(mode) + "// " + tag + "\n";
    auto result = call("benchmark", {{"source", source}});
    EXPECT_TRUE(result.structured.contains("result_id")) << result.text;
    return result.structured.value("result_id", "");
  }
  json record(const std::string& id, const std::string& name,
              const std::string& approach = "smem_tiling: 64x64") {
    auto result = call("record_candidate", {{"result_id", id},
                                            {"name", name},
                                            {"approach", approach},
                                            {"hypothesis", "tiles"},
                                            {"reason", "faster"}});
    last_text_ = result.text;
    last_error_ = result.is_error;
    return result.structured;
  }
  std::string last_text_;
  bool last_error_ = false;
};

TEST_F(RecordCandidateTest, ABenchmarkIsRevalidatedOnTheRunnerAcceptedAndCommitted) {
  start();
  const std::string id = benchmark("pass", "tiled");
  ASSERT_FALSE(id.empty());
  json out = record(id, "tiled");
  ASSERT_FALSE(last_error_) << last_text_;
  EXPECT_EQ(out["verdict"], "accepted_best");
  EXPECT_EQ(out["member"]["best"], true);
  EXPECT_NEAR(out["member"]["geomean"].get<double>(), 1.1, 1e-9);
  // The revalidation was a second benchmark job of the same source, stored in the run.
  const std::string again = out["revalidation_id"];
  EXPECT_NE(again, id);
  auto store = frontier::ResultStore::open(run_dir_ / "results.sqlite");
  auto stored = (*store)->find(again);
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_EQ((*stored)->kind, "benchmark");
  EXPECT_EQ((*stored)->candidate_sha256, (*(*store)->find(id))->candidate_sha256);
  EXPECT_THAT(last_text_, HasSubstr("accepted `tiled` as the best: 1.100x geomean, 10/10 passed"));
  EXPECT_TRUE(out.contains("commit")) << out.dump();
  EXPECT_TRUE(std::filesystem::exists(run_dir_ / "worktree" / "candidates" / "fp16_gemm" /
                                      "frontier" / "tiled" / "kernel.cu"));
  // live.log: the benchmark, the revalidation and the decision, a line each.
  const std::string log = kiln::testing::read_text(run_dir_ / "live.log");
  EXPECT_THAT(log, HasSubstr("benchmark " + id));
  EXPECT_THAT(log, HasSubstr("revalidation " + again));
  EXPECT_THAT(log, HasSubstr("frontier " + id + " name=tiled decision=accepted_best"));
  EXPECT_THAT(log, HasSubstr("4096x4096x4096 PASS 100.0us cv=0.40% 1.100x"));
}

TEST_F(RecordCandidateTest, ANewBestIsRevalidatedBesideTheIncumbentOnTheRunner) {
  start();
  record(benchmark("pass", "first"), "first");
  ASSERT_FALSE(last_error_) << last_text_;
  // The fake worker times an incumbent 5% slower than the candidate, when the job names one.
  json out = record(benchmark("faster", "second"), "second");
  ASSERT_FALSE(last_error_) << last_text_;
  EXPECT_EQ(out["verdict"], "accepted_best") << out.dump();
  EXPECT_DOUBLE_EQ(out["numbers"]["revalidation"]["speedup_vs_incumbent"].get<double>(), 1.05)
      << out.dump();
  EXPECT_THAT(out["reason"].get<std::string>(), HasSubstr("timed beside it, 1.05x as fast"));
}

TEST_F(RecordCandidateTest, ASubsetRunIsRefusedWithTheRule) {
  start();
  auto bench =
      call("benchmark", {{"source", fake_source("pass")}, {"workloads", {"16x4096x4096"}}});
  json out = record(bench.structured["result_id"], "subset");
  EXPECT_TRUE(last_error_);
  EXPECT_EQ(out["accepted"], false);
  EXPECT_THAT(last_text_, HasSubstr("a candidate counts only when every workload passes"));
}

TEST_F(RecordCandidateTest, AnUnscoredResultIsRefusedNamingTheGate) {
  start();
  json out = record(benchmark("no_cupti"), "nocupti");
  EXPECT_TRUE(last_error_);
  EXPECT_THAT(out["reason"].get<std::string>(), HasSubstr("did not run"));
  EXPECT_THAT(out["reason"].get<std::string>(), HasSubstr("CUPTI unavailable"));
}

TEST_F(RecordCandidateTest, NumbersFromTheAgentAreNotArguments) {
  start();
  auto result = call("record_candidate", {{"result_id", "r-0123456789abcdef"},
                                          {"name", "x"},
                                          {"approach", "smem_tiling"},
                                          {"hypothesis", ""},
                                          {"reason", ""},
                                          {"geomean_speedup", 9.9}});
  EXPECT_TRUE(result.is_error);
  EXPECT_THAT(result.text, HasSubstr("geomean_speedup"));
}

TEST_F(RecordCandidateTest, TheSamePtxIsRefusedNamingTheMember) {
  start();
  record(benchmark("pass", "same-ptx one"), "one");
  ASSERT_FALSE(last_error_) << last_text_;
  json out = record(benchmark("pass", "same-ptx two"), "two");
  EXPECT_TRUE(last_error_);
  EXPECT_THAT(out["reason"].get<std::string>(), HasSubstr("same PTX as frontier member `one`"));
}

TEST_F(RecordCandidateTest, ListFrontierShowsMembersAndWhyOthersWereRefused) {
  start();
  const std::string kept = benchmark("pass", "kept");
  record(kept, "kept");
  const std::string slower = benchmark("pass", "equal");
  record(slower, "equal");  // 1.1x again: does not beat `kept` by the margin
  auto result = call("list_frontier", json::object());
  ASSERT_FALSE(result.is_error) << result.text;
  const json& out = result.structured;
  ASSERT_EQ(out["members"].size(), 1u);
  EXPECT_EQ(out["best"], "kept");
  EXPECT_EQ(out["members"][0]["speedups"].size(), 10u);
  bool refusal_shown = false;
  for (const auto& row : out["recent"])
    if (row["result_id"] == slower)
      refusal_shown =
          row["decision"]["verdict"] == "refused" &&
          row["decision"]["reason"].get<std::string>().find("does not beat") != std::string::npos;
  EXPECT_TRUE(refusal_shown) << out.dump(2);
  EXPECT_THAT(result.text, HasSubstr("* kept  1.100x"));
  EXPECT_LT(result.text.size(), 10000u);
  EXPECT_LT(out.dump().size(), 10000u);
  auto resource = server_.resources().read("kiln://frontier");
  ASSERT_TRUE(resource.ok()) << resource.error().message;
  EXPECT_THAT((*resource)["contents"][0]["text"].get<std::string>(), HasSubstr("\"kept\""));
}

TEST_F(RecordCandidateTest, ListFrontierPagesTheRecentResults) {
  start();
  for (int i = 0; i < 4; ++i) benchmark("pass", "page" + std::to_string(i));
  auto first = call("list_frontier", {{"limit", 3}});
  ASSERT_FALSE(first.is_error) << first.text;
  EXPECT_EQ(first.structured["recent"].size(), 3u);
  EXPECT_EQ(first.structured["next_offset"], 3);
  auto second = call("list_frontier", {{"limit", 3}, {"offset", 3}});
  EXPECT_EQ(second.structured["recent"].size(), 1u);
  EXPECT_FALSE(second.structured.contains("next_offset"));
  EXPECT_NE(first.structured["recent"][0]["result_id"],
            second.structured["recent"][0]["result_id"]);
}

}  // namespace
}  // namespace kiln::runner
