// ContentCache: staging, committing by hash, candidates by hash.
#include "kiln/runner/content_cache.h"

#include <gmock/gmock.h>

#include "kiln/base/sha256.h"
#include "runner_fixture.h"

namespace kiln::runner {
namespace {

using namespace kiln::runner::testing;

std::map<std::string, std::string> bundle_files() {
  json body = job_body("pass");
  std::map<std::string, std::string> files;
  for (const auto& [name, contents] : body["task"]["files"].items()) files[name] = contents;
  return files;
}

TEST(ContentCache, CommitsAVerifiedBundleUnderItsHash) {
  TempDir dir;
  ContentCache cache(dir.path());
  ASSERT_TRUE(cache.prepare().ok());
  auto staged = cache.stage_task("fp16_gemm", bundle_files());
  ASSERT_TRUE(staged.ok()) << staged.error().message;
  std::filesystem::path staging = staged->root();
  auto loaded = tasks::load_task(staged->bundle_dir());
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ(loaded->sha256, bundled_task().sha256);
  auto task = cache.commit_task(std::move(*staged), loaded->sha256);
  ASSERT_TRUE(task.ok()) << task.error().message;
  EXPECT_EQ(task->dir, dir / "tasks" / bundled_task().sha256 / "fp16_gemm");
  EXPECT_FALSE(std::filesystem::exists(staging));
  // A second copy of the same bundle leaves the first in place and cleans up after itself.
  auto again = cache.stage_task("fp16_gemm", bundle_files());
  ASSERT_TRUE(again.ok());
  std::filesystem::path second = again->root();
  EXPECT_TRUE(cache.commit_task(std::move(*again), bundled_task().sha256).ok());
  EXPECT_FALSE(std::filesystem::exists(second));
}

TEST(ContentCache, DropsStagedBundlesThatAreNotCommitted) {
  TempDir dir;
  ContentCache cache(dir.path());
  ASSERT_TRUE(cache.prepare().ok());
  std::filesystem::path staging;
  {
    auto staged = cache.stage_task("fp16_gemm", bundle_files());
    ASSERT_TRUE(staged.ok());
    staging = staged->root();
    EXPECT_TRUE(std::filesystem::exists(staging));
  }
  EXPECT_FALSE(std::filesystem::exists(staging));
}

TEST(ContentCache, StoresCandidatesByHash) {
  TempDir dir;
  ContentCache cache(dir.path());
  ASSERT_TRUE(cache.prepare().ok());
  auto path = cache.store_candidate("kernel", sha256_hex("kernel"));
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(read_text(*path), "kernel");
  EXPECT_EQ(path->filename(), sha256_hex("kernel") + ".cu");
  EXPECT_TRUE(cache.store_candidate("kernel", sha256_hex("kernel")).ok());
}

TEST(ContentCache, PrepareSaysWhichFolderFailed) {
  ContentCache cache("/proc/kiln-cannot-be-here");
  auto prepared = cache.prepare();
  ASSERT_FALSE(prepared.ok());
  EXPECT_THAT(prepared.error().message, ::testing::HasSubstr("--cache-dir"));
}

}  // namespace
}  // namespace kiln::runner
