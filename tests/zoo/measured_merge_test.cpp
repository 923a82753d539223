// Checks recording measurements in meta.json (tests/zoo/support/measured_merge.cpp).
#include "measured_merge.h"

#include <gtest/gtest.h>

namespace kiln::zoo {
namespace {

using Json = nlohmann::ordered_json;

const char* kMeta = R"({
  "id": "gemm_example",
  "test": {"shapes": [{"M": 64}], "note": "keeps   its spacing"},
  "measured": []
}
)";

Json line(const std::string& gpu, int M, double time_us) {
  return Json{{"id", "gemm_example"},     {"gpu", gpu},           {"date", "2026-01-02"},
              {"shape", {{"M", M}}},      {"time_us", time_us},   {"tflops", 1.5},
              {"gbps", nullptr},          {"baseline", "cuBLAS"}, {"baseline_time_us", 3.25},
              {"command", "ctest -L gpu"}};
}

Json measurement(const Json& l) { return measurement_from_line(l).value(); }

TEST(MeasuredMerge, AddsMeasurementsAndKeepsTheRestOfTheText) {
  MergeCount count;
  auto merged = merge_measured(kMeta, {measurement(line("NVIDIA H200", 64, 12.5))}, count);
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  EXPECT_EQ(count.added, 1);
  EXPECT_EQ(*merged, R"({
  "id": "gemm_example",
  "test": {"shapes": [{"M": 64}], "note": "keeps   its spacing"},
  "measured": [
    {"gpu": "NVIDIA H200", "date": "2026-01-02", "shape": {"M": 64}, "time_us": 12.5, "tflops": 1.5, "gbps": null, "baseline": "cuBLAS", "baseline_time_us": 3.25, "command": "ctest -L gpu"}
  ]
}
)");
}

TEST(MeasuredMerge, ReplacesTheSameGpuAndShapeAndAppendsOthers) {
  MergeCount first;
  auto once = merge_measured(
      kMeta,
      {measurement(line("NVIDIA H200", 64, 12.5)), measurement(line("NVIDIA H200", 128, 20))},
      first);
  ASSERT_TRUE(once.ok());
  MergeCount second;
  auto twice = merge_measured(
      *once, {measurement(line("NVIDIA H200", 64, 11)), measurement(line("NVIDIA H100", 64, 15))},
      second);
  ASSERT_TRUE(twice.ok());
  EXPECT_EQ(second.replaced, 1);
  EXPECT_EQ(second.added, 1);
  const Json measured = Json::parse(*twice)["measured"];
  ASSERT_EQ(measured.size(), 3u);
  EXPECT_EQ(measured[0]["time_us"], 11);
  EXPECT_EQ(measured[1]["shape"]["M"], 128);
  EXPECT_EQ(measured[2]["gpu"], "NVIDIA H100");
}

TEST(MeasuredMerge, KeepsExistingItemsAndTheirStyle) {
  const std::string meta = R"({
  "id": "x",
  "measured": [
    {
      "gpu": "NVIDIA H200",
      "shape": {"M": 1},
      "time_us":   5
    },
    {
      "gpu": "NVIDIA H200",
      "shape": {"M": 64},
      "time_us": 7
    }
  ]
}
)";
  MergeCount count;
  auto merged = merge_measured(meta, {measurement(line("NVIDIA H200", 64, 12.5))}, count);
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  EXPECT_EQ(count.replaced, 1);
  EXPECT_EQ(*merged, R"({
  "id": "x",
  "measured": [
    {
      "gpu": "NVIDIA H200",
      "shape": {"M": 1},
      "time_us":   5
    },
    {
      "gpu": "NVIDIA H200",
      "date": "2026-01-02",
      "shape": {"M": 64},
      "time_us": 12.5,
      "tflops": 1.5,
      "gbps": null,
      "baseline": "cuBLAS",
      "baseline_time_us": 3.25,
      "command": "ctest -L gpu"
    }
  ]
}
)");
}

TEST(MeasuredMerge, RejectsBadLinesAndMetaWithoutMeasured) {
  Json no_time = line("NVIDIA H200", 64, 1);
  no_time.erase("time_us");
  EXPECT_FALSE(measurement_from_line(no_time).ok());
  EXPECT_FALSE(measurement_from_line(Json::array()).ok());
  Json no_id = line("NVIDIA H200", 64, 1);
  no_id.erase("id");
  EXPECT_FALSE(measurement_from_line(no_id).ok());
  MergeCount count;
  EXPECT_FALSE(merge_measured(R"({"id": "x"})", {}, count).ok());
  EXPECT_FALSE(merge_measured("{", {}, count).ok());
}

TEST(MeasuredMerge, IgnoresAMeasuredKeyNestedDeeper) {
  const std::string meta = R"({"test": {"measured": 1}, "measured": [], "x": "\"measured\": ["})";
  MergeCount count;
  auto merged = merge_measured(meta, {measurement(line("G", 1, 2))}, count);
  ASSERT_TRUE(merged.ok());
  const Json parsed = Json::parse(*merged);
  EXPECT_EQ(parsed["test"]["measured"], 1);
  EXPECT_EQ(parsed["measured"].size(), 1u);
  EXPECT_EQ(parsed["x"], "\"measured\": [");
}

}  // namespace
}  // namespace kiln::zoo
