#include "kiln/kb/kb_service.h"

#include <gtest/gtest.h>

#include <thread>

#include "kb_fixture.h"
#include "kiln/kb/source_set.h"

namespace kiln::kb {
namespace {

using namespace std::chrono_literals;

TEST(KbService, TouchesNothingUntilFirstUseThenBuildsTheIndex) {
  testing::TempDir dir;
  auto paths = testing::make_fixture(dir.path());
  KbService service(paths, 0ms);
  EXPECT_FALSE(std::filesystem::exists(paths.cache_dir));
  auto index = service.index();
  ASSERT_TRUE(index) << index.error().message;
  EXPECT_TRUE(std::filesystem::exists(paths.index_path()));
  ASSERT_TRUE(service.last_build());
  EXPECT_EQ(service.last_build()->zoo_entries, 7u);
}

TEST(KbService, ReusesAFreshIndexOnDiskWithoutRebuilding) {
  testing::TempDir dir;
  auto paths = testing::make_fixture(dir.path());
  ASSERT_TRUE(KbService(paths).index());
  KbService second(paths, 0ms);
  ASSERT_TRUE(second.index());
  EXPECT_FALSE(second.last_build()) << "a fresh index on disk must be opened, not rebuilt";
}

TEST(KbService, RebuildsWhenASourceChanges) {
  testing::TempDir dir;
  auto paths = testing::make_fixture(dir.path());
  KbService service(paths, 0ms);
  auto first = service.index();
  ASSERT_TRUE(first);
  auto hash = (*first)->meta("content_hash");

  testing::write_entry(
      paths.zoo_dir(),
      testing::zoo_meta("scan_block", "Block-wide inclusive scan", "scan", {"prefix_scan"}, "sm_80",
                        {"i32"}, "Warp scans combined through shared memory."),
      "# Scan\n", "__global__ void scan() {}\n");
  auto second = service.index();
  ASSERT_TRUE(second);
  EXPECT_NE((*second)->meta("content_hash"), hash);
  auto page = (*second)->search_zoo({.text = "inclusive scan"});
  ASSERT_TRUE(page);
  ASSERT_FALSE(page->hits.empty());
  EXPECT_EQ(page->hits.front().id, "scan_block");
}

TEST(KbService, ATouchedButUnchangedSourceDoesNotRebuild) {
  testing::TempDir dir;
  auto paths = testing::make_fixture(dir.path());
  KbService service(paths, 0ms);
  ASSERT_TRUE(service.index());
  const auto built_at = std::filesystem::last_write_time(paths.index_path());
  const auto note = paths.notes_dir() / "mbarrier.md";
  std::filesystem::last_write_time(note, std::filesystem::last_write_time(note) + 5s);
  KbService other(paths, 0ms);  // a fresh process sees the moved fingerprint, compares contents
  ASSERT_TRUE(other.index());
  EXPECT_FALSE(other.last_build());
  EXPECT_EQ(std::filesystem::last_write_time(paths.index_path()), built_at);
}

TEST(KbService, RechecksAtMostOncePerInterval) {
  testing::TempDir dir;
  auto paths = testing::make_fixture(dir.path());
  KbService service(paths, 1h);
  auto first = service.index();
  ASSERT_TRUE(first);
  testing::write_text(paths.notes_dir() / "new.md", "# New note\ninstructions: red.async\n");
  auto second = service.index();
  ASSERT_TRUE(second);
  EXPECT_EQ(first->get(), second->get()) << "within the interval the open index is reused";
}

TEST(KbService, ConcurrentBuildersBothEndWithACompleteIndex) {
  testing::TempDir dir;
  auto paths = testing::make_fixture(dir.path());
  KbService a(paths, 0ms);
  KbService b(paths, 0ms);
  Result<BuildReport> ra = make_error("not run"), rb = make_error("not run");
  std::thread ta([&] { ra = a.rebuild(); });
  std::thread tb([&] { rb = b.rebuild(); });
  ta.join();
  tb.join();
  ASSERT_TRUE(ra) << ra.error().message;
  ASSERT_TRUE(rb) << rb.error().message;
  auto index = KbIndex::open(paths.index_path());
  ASSERT_TRUE(index);
  EXPECT_EQ((*index)->zoo_ids().size(), 7u);
  for (const auto& entry : std::filesystem::directory_iterator(paths.cache_dir))
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
}

TEST(KbService, ReportsAnUnwritableCache) {
  testing::TempDir dir;
  auto paths = testing::make_fixture(dir.path());
  testing::write_text(dir.path() / "not_a_dir", "x");
  paths.cache_dir = dir.path() / "not_a_dir";
  KbService service(paths, 0ms);
  auto index = service.index();
  ASSERT_FALSE(index);
  EXPECT_NE(index.error().message.find("KILN_CACHE_DIR"), std::string::npos)
      << index.error().message;
}

TEST(SourceSet, ContentHashIgnoresTimesButNotBytes) {
  testing::TempDir dir;
  auto paths = testing::make_fixture(dir.path());
  auto sources = collect_sources(paths);
  EXPECT_TRUE(sources.cccl_found);
  const auto hash = source_content_hash(sources);
  const auto fingerprint = source_fingerprint(sources);
  const auto note = paths.notes_dir() / "cp-async.md";
  std::filesystem::last_write_time(note, std::filesystem::last_write_time(note) + 5s);
  EXPECT_EQ(source_content_hash(sources), hash);
  EXPECT_NE(source_fingerprint(sources), fingerprint);
  testing::write_text(note, testing::read_text(note) + "more\n");
  EXPECT_NE(source_content_hash(sources), hash);
}

TEST(KbPaths, IndexNameDependsOnTheSourceFoldersOnly) {
  KbPaths a{"/x/kb", "/cuda/gen", "/cache"};
  KbPaths b{"/x/kb/", "/cuda/gen", "/cache"};
  KbPaths c{"/y/kb", "/cuda/gen", "/cache"};
  EXPECT_EQ(a.index_path(), b.index_path());
  EXPECT_NE(a.index_path(), c.index_path());
  EXPECT_EQ(a.index_path().parent_path(), std::filesystem::path("/cache"));
  EXPECT_EQ(a.index_path().filename().string().rfind("kb-", 0), 0u);
}

}  // namespace
}  // namespace kiln::kb
