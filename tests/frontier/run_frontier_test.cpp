// RunFrontier: record_candidate's every acceptance and refusal path over a real store and a
// real git worktree, with the revalidation job and the PTX fingerprint faked.
#include "kiln/frontier/run_frontier.h"

#include <gmock/gmock.h>

#include <set>
#include <thread>

#include "frontier_fixture.h"
#include "kiln/base/file.h"
#include "kiln/frontier/frontier_index.h"
#include "kiln/mcp/schema_validator.h"

namespace kiln::frontier::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class RunFrontierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    make_worktree(run_ / "worktree");
    frontier_ = open_frontier();
  }

  std::unique_ptr<RunFrontier> open_frontier() {
    RunFrontierConfig config;
    config.store = run_ / "results.sqlite";
    config.worktree = run_ / "worktree";
    config.live_log = run_ / "live.log";
    config.required_gates = benchmark_gates();
    config.techniques = {"smem_tiling", "tensor_core_mma", "cp_async", "wgmma", "tma"};
    auto opened = RunFrontier::open(config, bundled_task());
    if (!opened) throw std::runtime_error(opened.error().message);
    return std::move(opened).value();
  }

  RecordOutcome record(const std::string& id, const std::string& name,
                       const std::string& approach = "smem_tiling: 64x64 tiles") {
    RecordRequest request{id, name, approach, "tiles cut global loads", "first try"};
    auto outcome = frontier_->record(request, revalidator_, &ptx_);
    if (!outcome) throw std::runtime_error(outcome.error().message);
    return *outcome;
  }

  std::filesystem::path frontier_dir() const {
    return run_ / "worktree" / "candidates" / "fp16_gemm" / "frontier";
  }

  static std::unique_ptr<ResultStore> open_store(const std::filesystem::path& path) {
    auto store = ResultStore::open(path);
    if (!store) throw std::runtime_error(store.error().message);
    return std::move(store).value();
  }

  TempDir run_;
  std::unique_ptr<ResultStore> store_ = open_store(run_ / "results.sqlite");
  std::unique_ptr<RunFrontier> frontier_;
  FakeRevalidator revalidator_{*store_, reproduces()};
  FakePtx ptx_;
};

TEST_F(RunFrontierTest, AFullScoredBenchmarkIsRevalidatedAcceptedAsBestAndCommitted) {
  const std::string source = kernel("tiled");
  const std::string id = store_result(*store_, source, with_speedup(1.043));
  auto outcome = record(id, "tiled");
  ASSERT_TRUE(outcome.accepted()) << outcome.decision.reason;
  EXPECT_EQ(outcome.decision.verdict, "accepted_best");
  EXPECT_EQ(revalidator_.calls, 1);
  EXPECT_TRUE(outcome.member->best);
  EXPECT_FALSE(outcome.member->revalidation_id.empty());
  EXPECT_NEAR(outcome.member->score.geomean, 1.043, 1e-12);
  EXPECT_EQ(outcome.member->score.workloads.size(), bundled_task()->workloads.size());
  // The exact measured source and its result, in the worktree, committed.
  EXPECT_EQ(read_text(frontier_dir() / "tiled" / "kernel.cu"), source);
  json result = json::parse(read_text(frontier_dir() / "tiled" / "result.json"));
  EXPECT_EQ(result["result_id"], id);
  EXPECT_EQ(result["result"]["candidate_sha256"], sha256_hex(source));
  ASSERT_FALSE(outcome.commit_id.empty()) << outcome.commit_error;
  EXPECT_EQ(Worktree(run_ / "worktree").status().value(), "");
  // The decision is stored with its numbers and its commit.
  auto listing = frontier_->listing(10, 0);
  ASSERT_TRUE(listing.ok());
  ASSERT_EQ(listing->members.size(), 1u);
  EXPECT_EQ(listing->members[0].name, "tiled");
}

TEST_F(RunFrontierTest, TheCommitMessageCarriesTheNumbers) {
  const std::string id = store_result(*store_, kernel("tiled"), with_speedup(1.043));
  auto outcome = record(id, "tiled");
  ASSERT_TRUE(outcome.accepted());
  const std::string message = commit_message(*outcome.member);
  EXPECT_THAT(message, HasSubstr("frontier: tiled 1.043x geomean, 10/10 passed, result " + id +
                                 ", revalidated " + outcome.member->revalidation_id));
}

TEST_F(RunFrontierTest, IndexJsonMatchesItsSchema) {
  record(store_result(*store_, kernel("a"), with_speedup(1.1)), "first");
  record(store_result(*store_, kernel("b"), with_speedup(0.9)), "other", "cp_async: 3 stages");
  auto schema_text = read_file(KILN_FRONTIER_INDEX_SCHEMA);
  ASSERT_TRUE(schema_text.ok());
  const json schema = json::parse(*schema_text);
  const json index = json::parse(read_text(frontier_dir() / "index.json"));
  EXPECT_EQ(mcp::validate_against_schema(schema, index), std::nullopt) << index.dump(2);
  ASSERT_EQ(index["members"].size(), 2u);
  EXPECT_EQ(index["best"], "first");
  EXPECT_EQ(index["members"][0]["name"], "first");
  EXPECT_EQ(index["members"][1]["family"], "cp_async");
  EXPECT_TRUE(index["members"][1]["revalidated_geomean"].is_null());
  // The schema is not vacuous: an index with a made-up field or a missing one fails it.
  json broken = index;
  broken["members"][0]["speedup_claimed"] = 9.9;
  EXPECT_NE(mcp::validate_against_schema(schema, broken), std::nullopt);
  broken = index;
  broken["members"][0].erase("result_id");
  EXPECT_NE(mcp::validate_against_schema(schema, broken), std::nullopt);
}

TEST_F(RunFrontierTest, AnUnknownResultIdIsRefusedAndTheRefusalIsStored) {
  auto outcome = record("r-0000000000000000", "made_up");
  EXPECT_FALSE(outcome.accepted());
  EXPECT_EQ(outcome.decision.verdict, "refused");
  EXPECT_THAT(outcome.decision.reason, HasSubstr("no result `r-0000000000000000`"));
  auto table = FrontierTable::open(run_ / "results.sqlite");
  auto decisions = (*table)->decisions(bundled_task()->sha256, 10, 0);
  ASSERT_TRUE(decisions.ok());
  ASSERT_EQ(decisions->size(), 1u);
  EXPECT_EQ((*decisions)[0].result_id, "r-0000000000000000");
  EXPECT_THAT(read_text(run_ / "live.log"), HasSubstr("decision=refused"));
}

TEST_F(RunFrontierTest, AResultOfAnotherTaskHashIsRefused) {
  const std::string id = store_result(*store_, kernel("elsewhere"), of_task(std::string(64, 'b')));
  auto outcome = record(id, "elsewhere");
  EXPECT_FALSE(outcome.accepted());
  EXPECT_THAT(outcome.decision.reason, HasSubstr("not this run's task"));
}

TEST_F(RunFrontierTest, ASubsetRunIsRefusedWithTheRule) {
  const std::string id = store_result(*store_, kernel("subset"), subset_of(2));
  auto outcome = record(id, "subset");
  EXPECT_FALSE(outcome.accepted());
  EXPECT_THAT(outcome.decision.reason, HasSubstr("covers 2 of the task's 10 workloads"));
  EXPECT_THAT(outcome.decision.reason,
              HasSubstr("Scoring commands can pass a subset; a candidate counts only when every "
                        "workload passes"));
}

TEST_F(RunFrontierTest, AFailedGateIsRefusedNamingTheGate) {
  const std::string id =
      store_result(*store_, kernel("cheat"), with_gate("input_checksum", "failed", "failed"));
  auto outcome = record(id, "cheat");
  EXPECT_FALSE(outcome.accepted());
  EXPECT_THAT(outcome.decision.reason, HasSubstr("input_checksum"));
}

TEST_F(RunFrontierTest, AGateThatDidNotRunIsRefused) {
  const std::string id =
      store_result(*store_, kernel("nocupti"), with_gate("activity_record", "not_run", "passed"));
  auto outcome = record(id, "nocupti");
  EXPECT_FALSE(outcome.accepted());
  EXPECT_THAT(outcome.decision.reason, HasSubstr("gate activity_record did not run"));
}

TEST_F(RunFrontierTest, TheNumbersComeFromTheStoreNotTheAgent) {
  const std::string id = store_result(*store_, kernel("modest"), with_speedup(1.02));
  RecordRequest request{id, "modest", "smem_tiling: claims 9.9x geomean", "this is 9.9x faster",
                        "geomean 9.9"};
  auto outcome = frontier_->record(request, revalidator_, &ptx_);
  ASSERT_TRUE(outcome.ok());
  ASSERT_TRUE(outcome->accepted());
  EXPECT_DOUBLE_EQ(outcome->member->score.geomean, 1.02);
  const json index = json::parse(read_text(frontier_dir() / "index.json"));
  EXPECT_DOUBLE_EQ(index["members"][0]["geomean"].get<double>(), 1.02);
}

TEST_F(RunFrontierTest, TheSameSourceTwiceIsRefusedNamingTheMember) {
  const std::string source = kernel("twice");
  record(store_result(*store_, source), "once");
  auto outcome = record(store_result(*store_, source, with_speedup(1.5)), "again");
  EXPECT_FALSE(outcome.accepted());
  EXPECT_THAT(outcome.decision.reason,
              HasSubstr("same source is already on the frontier as `once`"));
}

TEST_F(RunFrontierTest, TheSamePtxIsRefusedNamingTheMember) {
  const std::string first = kernel("original");
  const std::string renamed = kernel("original, with another comment");
  ptx_.same_as[renamed] = first;
  record(store_result(*store_, first), "original");
  auto outcome = record(store_result(*store_, renamed, with_speedup(1.5)), "renamed");
  EXPECT_FALSE(outcome.accepted());
  EXPECT_THAT(outcome.decision.reason, HasSubstr("same PTX as frontier member `original`"));
}

TEST_F(RunFrontierTest, WithoutACompilerThePtxIsNotComparedAndTheAnswerSaysSo) {
  ptx_.error = "nvcc not found";
  auto outcome = record(store_result(*store_, kernel("a")), "a");
  ASSERT_TRUE(outcome.accepted());
  ASSERT_EQ(outcome.notes.size(), 1u);
  EXPECT_THAT(outcome.notes[0], HasSubstr("PTX not compared"));
  EXPECT_EQ(outcome.member->ptx_sha256, "");
}

TEST_F(RunFrontierTest, NotBetterThanTheIncumbentIsRefusedWithTheNumbers) {
  record(store_result(*store_, kernel("best")), "best");  // 1.1x
  auto outcome = record(store_result(*store_, kernel("close"), with_speedup(1.105)), "close");
  EXPECT_FALSE(outcome.accepted());
  EXPECT_EQ(revalidator_.calls, 1);  // only the first was revalidated
  EXPECT_THAT(outcome.decision.reason, HasSubstr("does not beat `best`"));
  EXPECT_THAT(outcome.decision.reason, HasSubstr("1% margin"));
  EXPECT_DOUBLE_EQ(outcome.decision.numbers["family_incumbent"]["geomean"].get<double>(), 1.1);
}

TEST_F(RunFrontierTest, TheRevalidationTimesTheBestBesideTheCandidate) {
  const std::string best_source = kernel("best");
  record(store_result(*store_, best_source), "best");  // 1.1x, the first: no incumbent yet
  revalidator_.side_by_side = 1.08;
  auto outcome = record(store_result(*store_, kernel("faster"), with_speedup(1.2)), "faster");
  ASSERT_TRUE(outcome.accepted()) << outcome.decision.reason;
  ASSERT_EQ(revalidator_.incumbents.size(), 2u);
  EXPECT_EQ(revalidator_.incumbents[0], "");  // the first member had no incumbent
  EXPECT_EQ(revalidator_.incumbents[1], best_source);
  EXPECT_DOUBLE_EQ(outcome.decision.numbers["revalidation"]["speedup_vs_incumbent"].get<double>(),
                   1.08);
  EXPECT_THAT(outcome.decision.reason, HasSubstr("timed beside it, 1.08x as fast"));
}

TEST_F(RunFrontierTest, ACandidateThatDoesNotBeatTheBestSideBySideIsRefused) {
  // Its own geomean beats the best's by 9%, but timed beside the best in every sample of the
  // revalidation it is only 0.5% faster: the side-by-side ratio decides.
  record(store_result(*store_, kernel("best")), "best");  // 1.1x
  revalidator_.side_by_side = 1.005;
  auto outcome = record(store_result(*store_, kernel("noisy"), with_speedup(1.2)), "noisy");
  EXPECT_FALSE(outcome.accepted());
  EXPECT_THAT(outcome.decision.reason, HasSubstr("timed it beside the best, `best`"));
  EXPECT_THAT(outcome.decision.reason, HasSubstr("1.005x as fast"));
  EXPECT_THAT(outcome.decision.reason, HasSubstr("1% margin"));
  EXPECT_DOUBLE_EQ(outcome.decision.numbers["revalidation"]["speedup_vs_incumbent"].get<double>(),
                   1.005);
}

TEST_F(RunFrontierTest, ARatioAgainstAnotherSourceThanTheBestIsNotUsed) {
  // A revalidation whose incumbent block names another source (the best changed while it ran,
  // or a runner echoed something else) falls back to the incumbent's own geomean.
  record(store_result(*store_, kernel("best")), "best");  // 1.1x
  FakeRevalidator other(*store_, [](const StoredResult& first) {
    ResultShape shape;
    shape.speedup = first.geomean_speedup.value_or(1);
    shape.incumbent_sha256 = sha256_hex("some other kernel");
    shape.vs_incumbent = 0.5;
    return shape;
  });
  RecordRequest request{store_result(*store_, kernel("faster"), with_speedup(1.2)), "faster",
                        "smem_tiling", "", ""};
  auto outcome = frontier_->record(request, other, &ptx_);
  ASSERT_TRUE(outcome.ok());
  EXPECT_TRUE(outcome->accepted()) << outcome->decision.reason;
  EXPECT_FALSE(outcome->decision.numbers["revalidation"].contains("speedup_vs_incumbent"));
}

TEST_F(RunFrontierTest, ARevalidationThatDoesNotReproduceIsRefused) {
  FakeRevalidator slower(*store_, [](const StoredResult&) {
    ResultShape shape;
    shape.speedup = 1.0;
    return shape;
  });
  RecordRequest request{store_result(*store_, kernel("lucky"), with_speedup(1.2)), "lucky",
                        "smem_tiling", "", ""};
  auto outcome = frontier_->record(request, slower, &ptx_);
  ASSERT_TRUE(outcome.ok());
  EXPECT_FALSE(outcome->accepted());
  EXPECT_THAT(outcome->decision.reason, HasSubstr("did not reproduce"));
  EXPECT_FALSE(outcome->decision.revalidation_id.empty());
  EXPECT_NEAR(outcome->decision.numbers["revalidation"]["drift"].get<double>(), 1 - 1 / 1.2, 1e-9);
}

TEST_F(RunFrontierTest, ARevalidationThatFailsAGateIsRefused) {
  FakeRevalidator broken(*store_, [](const StoredResult&) {
    ResultShape shape;
    shape.status = "failed";
    shape.gate_not_passed = "determinism";
    return shape;
  });
  RecordRequest request{store_result(*store_, kernel("flaky")), "flaky", "smem_tiling", "", ""};
  auto outcome = frontier_->record(request, broken, &ptx_);
  ASSERT_TRUE(outcome.ok());
  EXPECT_FALSE(outcome->accepted());
  EXPECT_THAT(outcome->decision.reason, HasSubstr("did not pass"));
  EXPECT_THAT(outcome->decision.reason, HasSubstr("determinism"));
}

TEST_F(RunFrontierTest, ARevalidationThatCannotRunIsARefusalThatSaysWhy) {
  revalidator_.fail_with = "no GPU runner configured";
  auto outcome = record(store_result(*store_, kernel("a")), "a");
  EXPECT_FALSE(outcome.accepted());
  EXPECT_THAT(outcome.decision.reason, HasSubstr("revalidation could not run: no GPU runner"));
}

TEST_F(RunFrontierTest, ANewBestKeepsTheOldOneAsTheBestOfItsApproach) {
  record(store_result(*store_, kernel("tiles")), "tiles", "smem_tiling");  // 1.1x
  auto mma = record(store_result(*store_, kernel("mma"), with_speedup(1.3)), "mma",
                    "tensor_core_mma: mma.sync 16x8x16");
  ASSERT_TRUE(mma.accepted()) << mma.decision.reason;
  EXPECT_EQ(mma.decision.verdict, "accepted_best");
  auto listing = frontier_->listing(10, 0);
  ASSERT_EQ(listing->members.size(), 2u);
  EXPECT_EQ(listing->members[0].name, "mma");
  EXPECT_TRUE(listing->members[0].best);
  EXPECT_EQ(listing->members[1].name, "tiles");
  EXPECT_FALSE(listing->members[1].best);
  // A better candidate of the tiling family replaces `tiles` without touching the best.
  auto tiles2 = record(store_result(*store_, kernel("tiles2"), with_speedup(1.2)), "tiles2",
                       "smem_tiling: bigger tiles");
  ASSERT_TRUE(tiles2.accepted()) << tiles2.decision.reason;
  EXPECT_EQ(tiles2.decision.verdict, "accepted_approach");
  EXPECT_EQ(revalidator_.calls, 2);  // the best of an approach is not revalidated
  EXPECT_EQ(tiles2.retired, std::vector<std::string>{"tiles"});
  EXPECT_FALSE(std::filesystem::exists(frontier_dir() / "tiles"));
  EXPECT_TRUE(std::filesystem::exists(frontier_dir() / "tiles2" / "kernel.cu"));
  const json index = json::parse(read_text(frontier_dir() / "index.json"));
  ASSERT_EQ(index["members"].size(), 2u);
  EXPECT_EQ(index["best"], "mma");
}

TEST_F(RunFrontierTest, AnUnknownTechniqueIsRefusedListingTheVocabulary) {
  auto outcome = record(store_result(*store_, kernel("x")), "x", "magic: it is fast");
  EXPECT_FALSE(outcome.accepted());
  EXPECT_THAT(outcome.decision.reason, HasSubstr("`magic` is not a technique"));
  EXPECT_THAT(outcome.decision.reason, HasSubstr("smem_tiling"));
}

TEST_F(RunFrontierTest, TheCommitLeavesTheAgentsOtherWorkAlone) {
  const auto worktree = run_ / "worktree";
  const auto scratch = worktree / "candidates" / "fp16_gemm" / "scratch";
  write_text(scratch / "kernel.cu", kernel("work in progress"));  // modified, not staged
  write_text(scratch / "notes.md", "ideas");                      // untracked
  auto outcome = record(store_result(*store_, kernel("kept")), "kept");
  ASSERT_TRUE(outcome.accepted());
  ASSERT_FALSE(outcome.commit_id.empty()) << outcome.commit_error;
  auto status = Worktree(worktree).status();
  ASSERT_TRUE(status.ok());
  EXPECT_THAT(*status, HasSubstr(" M candidates/fp16_gemm/scratch/kernel.cu"));
  EXPECT_THAT(*status, HasSubstr("?? candidates/fp16_gemm/scratch/notes.md"));
  EXPECT_THAT(*status, Not(HasSubstr("frontier")));
  EXPECT_EQ(read_text(scratch / "kernel.cu"), kernel("work in progress"));
}

TEST_F(RunFrontierTest, AFailedCommitKeepsTheEntryAndSaysWhy) {
  // Another git process holds the index: the commit cannot be made.
  write_text(run_ / "worktree" / ".git" / "index.lock", "");
  auto outcome = record(store_result(*store_, kernel("kept")), "kept");
  ASSERT_TRUE(outcome.accepted());
  EXPECT_TRUE(outcome.commit_id.empty());
  EXPECT_THAT(outcome.commit_error, HasSubstr("index.lock"));
  auto listing = frontier_->listing(10, 0);
  ASSERT_EQ(listing->members.size(), 1u);
  auto table = FrontierTable::open(run_ / "results.sqlite");
  auto decisions = (*table)->decisions(bundled_task()->sha256, 1, 0);
  EXPECT_THAT((*decisions)[0].commit_error, HasSubstr("index.lock"));
}

TEST_F(RunFrontierTest, TwoSessionsRecordingAtOnceKeepOneConsistentFrontier) {
  // Two sessions: each its own connections to the run's store, both recording at once.
  auto second = open_frontier();
  constexpr int kEach = 6;
  std::vector<std::string> ids_a, ids_b;
  for (int i = 0; i < kEach; ++i) {
    ids_a.push_back(
        store_result(*store_, kernel("a" + std::to_string(i)), with_speedup(1.0 + 0.05 * i)));
    ids_b.push_back(
        store_result(*store_, kernel("b" + std::to_string(i)), with_speedup(1.02 + 0.05 * i)));
  }
  FakeRevalidator other(*store_, reproduces());
  std::thread a([&] {
    for (int i = 0; i < kEach; ++i) {
      RecordRequest r{ids_a[i], "a" + std::to_string(i), "smem_tiling", "", ""};
      ASSERT_TRUE(frontier_->record(r, revalidator_, &ptx_).ok());
    }
  });
  std::thread b([&] {
    for (int i = 0; i < kEach; ++i) {
      RecordRequest r{ids_b[i], "b" + std::to_string(i), "cp_async", "", ""};
      ASSERT_TRUE(second->record(r, other, &ptx_).ok());
    }
  });
  a.join();
  b.join();
  auto members = (*FrontierTable::open(run_ / "results.sqlite"))->members(bundled_task()->sha256);
  ASSERT_TRUE(members.ok());
  int best = 0;
  std::map<std::string, int> active_per_family;
  double best_geomean = 0, top = 0;
  for (const auto& m : *members) {
    if (!m.active) continue;
    ++active_per_family[m.family];
    top = std::max(top, m.score.geomean);
    if (m.best) {
      ++best;
      best_geomean = m.score.geomean;
    }
  }
  EXPECT_EQ(best, 1);
  EXPECT_EQ(active_per_family["smem_tiling"], 1);
  EXPECT_EQ(active_per_family["cp_async"], 1);
  EXPECT_DOUBLE_EQ(best_geomean, top);
  // The exported index is the store's frontier, whoever exported last.
  const json index = json::parse(read_text(frontier_dir() / "index.json"));
  EXPECT_EQ(index["members"].size(), 2u);
  std::set<std::string> on_disk;
  for (const auto& entry : std::filesystem::directory_iterator(frontier_dir()))
    if (entry.is_directory()) on_disk.insert(entry.path().filename().string());
  std::set<std::string> listed;
  for (const auto& m : index["members"]) listed.insert(m["name"].get<std::string>());
  EXPECT_EQ(on_disk, listed);
  EXPECT_EQ(Worktree(run_ / "worktree").status().value(), "");
}

}  // namespace
}  // namespace kiln::frontier::testing
