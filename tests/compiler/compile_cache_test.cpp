// compile_cache.h: entries by content hash, written whole.
#include "kiln/compiler/compile_cache.h"

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace kiln::compiler {
namespace {

CompileKeyInputs inputs() {
  return {"__global__ void k() {}", "kernel.cu", "sm_90a",
          {"-O3", "-lineinfo"},     "V13.0.88",  "abi v1"};
}

TEST(CompileCache, KeyIsStableAndChangesWithEveryInput) {
  const std::string key = compile_key(inputs());
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(compile_key(inputs()), key);
  auto changed = [&](auto edit) {
    CompileKeyInputs i = inputs();
    edit(i);
    return compile_key(i) != key;
  };
  EXPECT_TRUE(changed([](CompileKeyInputs& i) { i.source += " "; }));
  EXPECT_TRUE(changed([](CompileKeyInputs& i) { i.file_name = "other.cu"; }));
  EXPECT_TRUE(changed([](CompileKeyInputs& i) { i.arch = "sm_80"; }));
  EXPECT_TRUE(changed([](CompileKeyInputs& i) { i.flags.push_back("-DX"); }));
  EXPECT_TRUE(changed([](CompileKeyInputs& i) { i.nvcc_version = "V13.1"; }));
  EXPECT_TRUE(changed([](CompileKeyInputs& i) { i.abi_header += "\n"; }));
}

TEST(CompileCache, FieldBoundariesCannotBeShifted) {
  CompileKeyInputs a = inputs();
  CompileKeyInputs b = inputs();
  a.flags = {"-DA", "B"};
  b.flags = {"-DAB"};
  EXPECT_NE(compile_key(a), compile_key(b));
}

TEST(CompileCache, MissThenHitAfterStore) {
  testing::TempDir dir;
  CompileCache cache(dir.path());
  EXPECT_FALSE(cache.find("k1").has_value());
  auto stored = cache.store("k1", {{"result.json", "{}"}, {"kernel.ptx", ".version 9.0"}});
  ASSERT_TRUE(stored.ok()) << stored.error().message;
  EXPECT_EQ(*stored, dir.path() / "compile" / "k1");
  ASSERT_TRUE(cache.find("k1").has_value());
  EXPECT_EQ(testing::read_text(*stored / "kernel.ptx"), ".version 9.0");
}

TEST(CompileCache, AnEntryWithoutResultIsNotAHit) {
  testing::TempDir dir;
  testing::write_text(dir.path() / "compile" / "k2" / "kernel.ptx", "half written");
  EXPECT_FALSE(CompileCache(dir.path()).find("k2").has_value());
}

TEST(CompileCache, SecondStoreOfTheSameKeyKeepsTheFirst) {
  testing::TempDir dir;
  CompileCache cache(dir.path());
  ASSERT_TRUE(cache.store("k3", {{"result.json", "first"}}).ok());
  auto again = cache.store("k3", {{"result.json", "second"}});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(testing::read_text(*again / "result.json"), "first");
}

TEST(CompileCache, LeavesNoScratchFoldersBehind) {
  testing::TempDir dir;
  CompileCache cache(dir.path());
  ASSERT_TRUE(cache.store("k4", {{"result.json", "{}"}}).ok());
  ASSERT_TRUE(cache.store("k4", {{"result.json", "{}"}}).ok());
  int entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(cache.dir())) {
    ++entries;
    EXPECT_EQ(entry.path().filename(), "k4");
  }
  EXPECT_EQ(entries, 1);
}

TEST(CompileCache, UnwritableRootIsAnErrorSayingWhatToSet) {
  CompileCache cache("/proc/kiln-no-such-dir");
  auto stored = cache.store("k5", {{"result.json", "{}"}});
  ASSERT_FALSE(stored.ok());
  EXPECT_NE(stored.error().message.find("KILN_CACHE_DIR"), std::string::npos);
}

}  // namespace
}  // namespace kiln::compiler
