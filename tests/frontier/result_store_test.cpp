// ResultStore: insert, find, unknown ids, recent lists, candidate sources, and refusals.
#include "kiln/frontier/result_store.h"

#include <gmock/gmock.h>
#include <stdlib.h>

#include <set>
#include <stdexcept>
#include <thread>

#include "kiln/base/sha256.h"

namespace kiln::frontier {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "kiln_frontier_test_XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

const std::string kTask(64, 'a');

NewResult new_result(const std::string& source, const std::string& status = "passed",
                     bool scored = true, const std::string& task = kTask) {
  NewResult r;
  r.kind = "benchmark";
  r.task_name = "fp16_gemm";
  r.task_sha256 = task;
  r.candidate_source = source;
  r.source_path = "worktree/kernel.cu";
  r.runner = "http://gpu:8000";
  r.job_id = "j-0123";
  r.result = {
      {"status", status},
      {"stage", "done"},
      {"task", {{"name", "fp16_gemm"}, {"sha256", task}}},
      {"candidate_sha256", sha256_hex(source)},
      {"summary", {{"passed", 10}, {"total", 10}, {"scored", scored}, {"geomean_speedup", 1.07}}}};
  return r;
}

std::unique_ptr<ResultStore> open_store(const std::filesystem::path& path) {
  auto store = ResultStore::open(path);
  if (!store) throw std::runtime_error(store.error().message);
  return std::move(store).value();
}

TEST(ResultStore, InsertedResultsAreFoundByTheirId) {
  TempDir dir;
  auto store = open_store(dir / "results.sqlite");
  auto stored = store->insert(new_result("kernel A"));
  ASSERT_TRUE(stored.ok()) << stored.error().message;
  EXPECT_EQ(stored->id.rfind("r-", 0), 0u);
  EXPECT_EQ(stored->id.size(), 18u);
  auto found = store->find(stored->id);
  ASSERT_TRUE(found.ok());
  ASSERT_TRUE(found->has_value());
  const StoredResult& r = **found;
  EXPECT_EQ(r.status, "passed");
  EXPECT_TRUE(r.scored);
  EXPECT_DOUBLE_EQ(r.geomean_speedup.value_or(0), 1.07);
  EXPECT_EQ(r.candidate_sha256, sha256_hex("kernel A"));
  EXPECT_EQ(r.task_sha256, kTask);
  EXPECT_EQ(r.runner, "http://gpu:8000");
  EXPECT_EQ(r.job_id, "j-0123");
  EXPECT_EQ(r.source_path, "worktree/kernel.cu");
  EXPECT_EQ(r.result, new_result("kernel A").result);
  EXPECT_EQ(r.created_ms, stored->created_ms);
  auto source = store->candidate_source(r.candidate_sha256);
  ASSERT_TRUE(source.ok() && source->has_value());
  EXPECT_EQ(**source, "kernel A");
}

TEST(ResultStore, UnknownIdsAreNotFound) {
  TempDir dir;
  auto store = open_store(dir / "results.sqlite");
  auto found = store->find("r-0000000000000000");
  ASSERT_TRUE(found.ok());
  EXPECT_FALSE(found->has_value());
  auto source = store->candidate_source(std::string(64, 'f'));
  ASSERT_TRUE(source.ok());
  EXPECT_FALSE(source->has_value());
}

TEST(ResultStore, ResultsSurviveReopening) {
  TempDir dir;
  std::string id;
  {
    auto store = open_store(dir / "sub" / "results.sqlite");
    id = store->insert(new_result("kernel")).value().id;
  }
  auto store = open_store(dir / "sub" / "results.sqlite");
  auto found = store->find(id);
  ASSERT_TRUE(found.ok() && found->has_value());
}

TEST(ResultStore, ListsRecentResultsNewestFirst) {
  TempDir dir;
  auto store = open_store(dir / "results.sqlite");
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i)
    ids.push_back(store->insert(new_result("kernel " + std::to_string(i))).value().id);
  store->insert(new_result("other task", "passed", true, std::string(64, 'b'))).value();
  auto all = store->list_recent({});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 6u);
  auto recent = store->list_recent({kTask, "", 3});
  ASSERT_TRUE(recent.ok());
  ASSERT_EQ(recent->size(), 3u);
  EXPECT_EQ((*recent)[0].id, ids[4]);
  EXPECT_EQ((*recent)[1].id, ids[3]);
  EXPECT_EQ((*recent)[2].id, ids[2]);
  EXPECT_TRUE(store->list_recent({kTask, "profile", 10})->empty());
}

TEST(ResultStore, OnlyAPassingScoredResultKeepsAScore) {
  TempDir dir;
  auto store = open_store(dir / "results.sqlite");
  auto failed = store->insert(new_result("bad kernel", "failed", true)).value();
  EXPECT_FALSE(failed.scored);
  EXPECT_FALSE(failed.geomean_speedup.has_value());
  auto subset = store->insert(new_result("subset kernel", "passed", false)).value();
  EXPECT_FALSE(subset.scored);
  EXPECT_FALSE(store->find(subset.id)->value().geomean_speedup.has_value());
}

TEST(ResultStore, RefusesAResultForAnotherTaskOrCandidate) {
  TempDir dir;
  auto store = open_store(dir / "results.sqlite");
  NewResult r = new_result("kernel");
  r.result["task"]["sha256"] = std::string(64, 'c');
  auto refused = store->insert(r);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("task sha256"));
  r = new_result("kernel");
  r.candidate_source = "a different kernel";
  refused = store->insert(r);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("candidate sha256"));
  EXPECT_TRUE(store->list_recent({})->empty());
}

TEST(ResultStore, IdsAreUniqueUnderConcurrentInserts) {
  TempDir dir;
  auto store = open_store(dir / "results.sqlite");
  std::vector<std::thread> threads;
  std::mutex mutex;
  std::set<std::string> ids;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        auto stored = store->insert(new_result("kernel " + std::to_string(t)));
        std::lock_guard lock(mutex);
        if (stored) ids.insert(stored->id);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(ids.size(), 40u);
}

TEST(ResultStore, OpenSaysWhatIsWrong) {
  TempDir dir;
  std::filesystem::create_directories(dir / "folder.sqlite");
  auto opened = ResultStore::open(dir / "folder.sqlite");
  ASSERT_FALSE(opened.ok());
  EXPECT_THAT(opened.error().message, HasSubstr("folder.sqlite"));
}

TEST(ResultStore, DefaultPathIsInTheRunDirectory) {
  EXPECT_EQ(default_store_path("/runs/r1"), std::filesystem::path("/runs/r1/results.sqlite"));
  EXPECT_EQ(format_utc(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(format_utc(1234), "1970-01-01T00:00:01.234Z");
}

}  // namespace
}  // namespace kiln::frontier
