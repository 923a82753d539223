#include "kiln/kb/zoo_entry.h"

#include <gtest/gtest.h>

#include "kb_fixture.h"

namespace kiln::kb {
namespace {

TEST(ZooEntry, ParsesMetaJson) {
  auto entry = parse_zoo_entry(
      "gemm_x", R"({"id": "gemm_y", "title": "T", "op": "gemm_tn", "techniques": ["wgmma", 3],
    "arch": "sm_90a", "dtypes": ["f16"], "measured": [{"gpu": "NVIDIA H200"}]})");
  ASSERT_TRUE(entry) << entry.error().message;
  EXPECT_EQ(entry->id, "gemm_x");  // the folder wins
  EXPECT_EQ(entry->techniques, std::vector<std::string>{"wgmma"});
  EXPECT_EQ(entry->measured.size(), 1u);
  ASSERT_EQ(entry->warnings.size(), 1u);
  EXPECT_NE(entry->warnings[0].find("gemm_y"), std::string::npos);
}

TEST(ZooEntry, RejectsMetaWithoutTitleOrOpOrNotJson) {
  EXPECT_FALSE(parse_zoo_entry("x", R"({"op": "gemm_tn"})"));
  EXPECT_FALSE(parse_zoo_entry("x", R"({"title": "T"})"));
  EXPECT_FALSE(parse_zoo_entry("x", "[1, 2]"));
  auto broken = parse_zoo_entry("x", "{ nope");
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().message.find("not a JSON object"), std::string::npos);
}

TEST(ZooEntry, ReadsFilesAndSuggestsCloseIdsForUnknownOnes) {
  testing::TempDir dir;
  auto paths = testing::make_fixture(dir.path());
  auto kernel = read_zoo_file(paths.zoo_dir(), "transpose_smem", "kernel.cu");
  ASSERT_TRUE(kernel) << kernel.error().message;
  EXPECT_NE(kernel->find("tile[32][33]"), std::string::npos);

  auto unknown = read_zoo_file(paths.zoo_dir(), "gemm_warp_persistent", "kernel.cu");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("did you mean: gemm_warp_specialized_persistent"),
            std::string::npos)
      << unknown.error().message;
  EXPECT_FALSE(read_zoo_file(paths.zoo_dir(), "transpose_smem", "../../etc/passwd"));
  EXPECT_FALSE(read_zoo_file(paths.zoo_dir(), "..", "meta.json"));
  EXPECT_FALSE(read_zoo_file(paths.zoo_dir(), "broken_entry", "kernel.cu"));  // no such file
}

TEST(ZooEntry, ListsEntriesAndLoadsTheVocabulary) {
  testing::TempDir dir;
  auto paths = testing::make_fixture(dir.path());
  auto ids = list_zoo_ids(paths.zoo_dir());
  EXPECT_EQ(ids.front(), "broken_entry");
  EXPECT_EQ(ids.size(), 8u);
  auto vocabulary = load_zoo_vocabulary(paths.zoo_dir());
  EXPECT_TRUE(vocabulary.techniques.count("wgmma"));
  EXPECT_NE(std::find(vocabulary.ops.begin(), vocabulary.ops.end(), "gemm_tn"),
            vocabulary.ops.end());
  EXPECT_NE(std::find(vocabulary.ops.begin(), vocabulary.ops.end(), "attention_fwd"),
            vocabulary.ops.end());
  auto loaded = load_zoo_entry(paths.zoo_dir() / "transpose_smem");
  ASSERT_TRUE(loaded);
  EXPECT_NE(loaded->notes.find("bank"), std::string::npos);
  EXPECT_FALSE(load_zoo_entry(paths.zoo_dir() / "nothing_here"));
}

}  // namespace
}  // namespace kiln::kb
