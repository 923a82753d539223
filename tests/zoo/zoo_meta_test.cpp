// Checks reading and validating zoo entries (tests/zoo/support/zoo_meta.cpp) on entries
// written to a temporary folder.
#include "zoo_meta.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>

namespace kiln::zoo {
namespace {

using Json = nlohmann::ordered_json;

Json valid_meta() {
  return Json::parse(R"json({
    "id": "gemm_example",
    "title": "Example GEMM",
    "op": "gemm_tn",
    "techniques": ["naive"],
    "arch": "sm_80",
    "dtypes": ["f16"],
    "description": "One thread per output.",
    "related": ["gemm_other"],
    "test": {
      "signature": {
        "inputs":  [{"name": "A", "dtype": "f16", "shape": ["M", "K"]},
                    {"name": "B", "dtype": "f16", "shape": ["N", "K"]}],
        "outputs": [{"name": "C", "dtype": "f16", "shape": ["M", "N"]}],
        "scalars": []
      },
      "shapes": [{"M": 64, "N": 64, "K": 64}, {"M": 4096, "N": 4096, "K": 4096}],
      "tolerance": {"atol": 0.01, "rtol": 0.002},
      "input_range": [-1, 1],
      "flops": "2*M*N*K",
      "bytes": "2*(M*K+N*K+M*N)"
    },
    "measured": []
  })json");
}

class ZooMetaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("kiln_zoo_meta_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
    dir_ = root_ / "gemm_example";
    std::filesystem::create_directories(dir_);
    write("NOTES.md", "# Example\nTeaches nothing.\n");
    write("kernel.cu", "extern \"C\" int kiln_launch() { return 0; }\n");
    write_meta(valid_meta());
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  void write_meta(const Json& meta) { write("meta.json", meta.dump(2)); }

  MetaCheck check() {
    return check_zoo_entry(dir_, {"naive", "smem_tiling"}, {"gemm_example", "gemm_other"});
  }

  // The problems found after `edit` changes the valid meta, joined for messages.
  std::string problems_after(const std::function<void(Json&)>& edit) {
    Json meta = valid_meta();
    edit(meta);
    write_meta(meta);
    std::string all;
    for (const auto& p : check().problems) all += p + "\n";
    return all;
  }

  std::filesystem::path root_;
  std::filesystem::path dir_;
};

TEST_F(ZooMetaTest, AcceptsAValidEntry) {
  const MetaCheck result = check();
  ASSERT_TRUE(result.problems.empty()) << result.problems.front();
  ASSERT_TRUE(result.meta.has_value());
  const ZooMeta& meta = *result.meta;
  EXPECT_EQ(meta.id, "gemm_example");
  EXPECT_EQ(meta.op, "gemm_tn");
  ASSERT_EQ(meta.inputs.size(), 2u);
  EXPECT_EQ(meta.inputs[1].dtype, KILN_F16);
  ASSERT_EQ(meta.shapes.size(), 2u);
  EXPECT_EQ(meta.shapes[1].at("K"), 4096);
  EXPECT_EQ(meta.shape_json[0].dump(), R"({"M":64,"N":64,"K":64})");  // order kept
  EXPECT_EQ(format_shape(meta.shape_json[0]), "{M: 64, N: 64, K: 64}");
  EXPECT_EQ(format_dims(meta.shapes[0]), "{K: 64, M: 64, N: 64}");
  EXPECT_EQ(meta.atol, 0.01);
  EXPECT_EQ(meta.flops, "2*M*N*K");
  EXPECT_EQ(meta.group_sizes_multiple_of, 8);
}

TEST_F(ZooMetaTest, RejectsMissingFieldsUnknownTechniquesAndBadArch) {
  EXPECT_NE(problems_after([](Json& m) { m.erase("title"); }).find("title"), std::string::npos);
  EXPECT_NE(problems_after([](Json& m) {
              m["techniques"].push_back("magic");
            }).find("'magic' is not in kb/zoo/techniques.json"),
            std::string::npos);
  EXPECT_NE(
      problems_after([](Json& m) { m["techniques"] = Json::array(); }).find("techniques: is empty"),
      std::string::npos);
  EXPECT_NE(problems_after([](Json& m) { m["arch"] = "sm_90"; }).find("arch"), std::string::npos);
  EXPECT_NE(
      problems_after([](Json& m) { m["op"] = "gemm_nn"; }).find("not an op of the README table"),
      std::string::npos);
  EXPECT_NE(problems_after([](Json& m) { m["id"] = "other"; }).find("folder"), std::string::npos);
  EXPECT_NE(problems_after([](Json& m) { m.erase("measured"); }).find("measured"),
            std::string::npos);
  EXPECT_NE(problems_after([](Json& m) { m["measured"] = Json::object(); }).find("measured"),
            std::string::npos);
}

TEST_F(ZooMetaTest, RejectsSignaturesThatDriftFromTheOpTable) {
  EXPECT_NE(problems_after([](Json& m) {
              m["test"]["signature"]["inputs"][1]["dtype"] = "bf16";
            }).find("must equal A's dtype"),
            std::string::npos);
  EXPECT_NE(problems_after([](Json& m) {
              m["test"]["signature"]["outputs"][0]["shape"] = {"N", "M"};
            }).find("requires [M, N]"),
            std::string::npos);
  EXPECT_NE(problems_after([](Json& m) {
              m["test"]["signature"]["inputs"][0]["name"] = "X";
            }).find("names it 'A'"),
            std::string::npos);
  EXPECT_NE(
      problems_after([](Json& m) { m["test"]["signature"]["inputs"].erase(1); }).find("takes 2"),
      std::string::npos);
  EXPECT_NE(problems_after([](Json& m) {
              m["test"]["signature"]["inputs"][0]["dtype"] = "fp16";
            }).find("not a dtype"),
            std::string::npos);
  EXPECT_NE(problems_after([](Json& m) {
              m["test"]["signature"]["scalars"].push_back(
                  {{"name", "alpha"}, {"dtype", "f64"}, {"value", 1}});
            }).find("scalars"),
            std::string::npos);
}

TEST_F(ZooMetaTest, RejectsBadShapesToleranceAndExpressions) {
  EXPECT_NE(
      problems_after([](Json& m) { m["test"]["shapes"] = Json::array(); }).find("test.shapes"),
      std::string::npos);
  EXPECT_NE(
      problems_after([](Json& m) { m["test"]["shapes"][0]["M"] = 0; }).find("positive integer"),
      std::string::npos);
  EXPECT_NE(
      problems_after([](Json& m) { m["test"]["shapes"][1].erase("K"); }).find("test.shapes[1]"),
      std::string::npos);
  EXPECT_NE(problems_after([](Json& m) { m["test"]["tolerance"]["rtol"] = -1; }).find("rtol"),
            std::string::npos);
  EXPECT_NE(problems_after([](Json& m) {
              m["test"]["input_range"] = {1, -1};
            }).find("input_range"),
            std::string::npos);
  EXPECT_NE(problems_after([](Json& m) { m["test"]["flops"] = "2*M*N*Q"; }).find("test.flops"),
            std::string::npos);
}

TEST_F(ZooMetaTest, RejectsMissingNotesAndKernel) {
  write("NOTES.md", "  \n");
  std::filesystem::remove(dir_ / "kernel.cu");
  const MetaCheck result = check();
  ASSERT_EQ(result.problems.size(), 2u);
  EXPECT_NE(result.problems[0].find("NOTES.md: empty"), std::string::npos);
  EXPECT_NE(result.problems[1].find("kernel.cu: missing"), std::string::npos);
}

TEST_F(ZooMetaTest, ReportsInvalidJson) {
  write("meta.json", "{\"id\": ");
  const MetaCheck result = check();
  ASSERT_EQ(result.problems.size(), 1u);
  EXPECT_NE(result.problems[0].find("not valid JSON"), std::string::npos);
  EXPECT_FALSE(result.meta.has_value());
}

TEST_F(ZooMetaTest, WarnsAboutUnknownRelatedEntries) {
  Json meta = valid_meta();
  meta["related"].push_back("gemm_future");
  write_meta(meta);
  const MetaCheck result = check();
  EXPECT_TRUE(result.problems.empty());
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_NE(result.warnings[0].find("gemm_future"), std::string::npos);
}

TEST_F(ZooMetaTest, ChecksGroupedGemmGroupSizes) {
  Json meta = valid_meta();
  meta["op"] = "grouped_gemm_tn";
  meta["test"]["signature"]["inputs"][1]["shape"] = {"G", "N", "K"};
  meta["test"]["signature"]["inputs"].push_back(
      {{"name", "offsets"}, {"dtype", "i32"}, {"shape", {"G + 1"}}});
  meta["test"]["shapes"] = Json::parse(R"([{"M": 100, "N": 64, "K": 64, "G": 4}])");
  write_meta(meta);
  MetaCheck result = check();
  ASSERT_EQ(result.problems.size(), 1u) << result.problems.front();
  EXPECT_NE(result.problems[0].find("group_sizes_multiple_of"), std::string::npos);
  meta["test"]["group_sizes_multiple_of"] = 4;
  write_meta(meta);
  result = check();
  EXPECT_TRUE(result.problems.empty()) << result.problems.front();
  EXPECT_EQ(result.meta->group_sizes_multiple_of, 4);
}

TEST(ZooEntries, FindsFoldersWithAMetaOrAKernel) {
  const auto root =
      std::filesystem::temp_directory_path() / ("kiln_zoo_find_" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root / "b_entry");
  std::filesystem::create_directories(root / "a_entry");
  std::filesystem::create_directories(root / "references" / "src");
  std::ofstream(root / "b_entry" / "kernel.cu") << "";
  std::ofstream(root / "a_entry" / "meta.json") << "{}";
  const auto entries = find_zoo_entries(root);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].filename(), "a_entry");
  EXPECT_EQ(entries[1].filename(), "b_entry");
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace kiln::zoo

namespace kiln::zoo {
namespace {

TEST_F(ZooMetaTest, ReadsAPerOutputToleranceAndRefusesOneForAnUnknownOutput) {
  Json meta = valid_meta();
  meta["test"]["tolerance"]["outputs"] = {{"C", {{"atol", 0.5}, {"rtol", 0.125}}}};
  write_meta(meta);
  const MetaCheck result = check();
  ASSERT_TRUE(result.problems.empty()) << result.problems.front();
  EXPECT_EQ(result.meta->tolerance_for("C").rtol, 0.125);
  EXPECT_EQ(result.meta->tolerance_for("C").atol, 0.5);
  EXPECT_EQ(result.meta->tolerance_for("other").rtol, 0.002);  // the entry's default
  const std::string problems = problems_after([](Json& m) {
    m["test"]["tolerance"]["outputs"] = {{"D", {{"atol", 0.5}, {"rtol", 0.1}}}};
  });
  EXPECT_NE(problems.find("test.tolerance.outputs.D: names no output"), std::string::npos)
      << problems;
  const std::string negative = problems_after([](Json& m) {
    m["test"]["tolerance"]["outputs"] = {{"C", {{"atol", -1}, {"rtol", 0.1}}}};
  });
  EXPECT_NE(negative.find("test.tolerance.outputs.C.atol"), std::string::npos) << negative;
}

}  // namespace
}  // namespace kiln::zoo
