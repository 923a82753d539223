#include "kiln/replay/json_diff.h"

#include <gtest/gtest.h>

namespace kiln::replay {
namespace {

using json = nlohmann::json;

TEST(JsonDiffTest, AChangedAnswerIsFoundAtItsJsonPath) {
  const json old = json::parse(R"({"result":{"structuredContent":{"workloads":[
      {"name":"64x64x64","passed":true},{"name":"33x17x40","passed":true}]}}})");
  json now = old;
  now["result"]["structuredContent"]["workloads"][1]["passed"] = false;
  auto diffs = diff_json(old, now, IgnoreList::defaults());
  ASSERT_EQ(diffs.size(), 1u);
  EXPECT_EQ(diffs[0].path, "/result/structuredContent/workloads/1/passed");
  EXPECT_EQ(*diffs[0].old, true);
  EXPECT_EQ(*diffs[0].now, false);
}

TEST(JsonDiffTest, AKeyOnOneSideOnlyIsAbsentOnTheOther) {
  auto diffs = diff_json(json{{"a", 1}}, json{{"b", 1}}, IgnoreList());
  ASSERT_EQ(diffs.size(), 2u);
  EXPECT_EQ(diffs[0].path, "/a");
  EXPECT_FALSE(diffs[0].now.has_value());
  EXPECT_EQ(diffs[1].path, "/b");
  EXPECT_FALSE(diffs[1].old.has_value());
  EXPECT_EQ(show_value(diffs[1].old), "(absent)");
}

TEST(JsonDiffTest, ALongerArrayShowsItsExtraElements) {
  auto diffs = diff_json(json::parse("[1,2]"), json::parse("[1,2,3]"), IgnoreList());
  ASSERT_EQ(diffs.size(), 1u);
  EXPECT_EQ(diffs[0].path, "/2");
  EXPECT_EQ(*diffs[0].now, 3);
}

TEST(JsonDiffTest, VolatileFieldsAreIgnoredByDefault) {
  const json old = json::parse(R"({"result":{"serverInfo":{"name":"kiln","version":"0.1.0"},
      "structuredContent":{"seconds":3.1,"nvcc_seconds":3.0,"cache_hit":false,"elapsed_s":1,
      "job_id":"job-1","result_id":"r-1","createdAt":"2026-12-02T06:00:00Z","wait_ms":5}}})");
  const json now = json::parse(R"({"result":{"serverInfo":{"name":"kiln","version":"0.2.0"},
      "structuredContent":{"seconds":0.1,"nvcc_seconds":0.0,"cache_hit":true,"elapsed_s":9,
      "job_id":"job-2","result_id":"r-2","createdAt":"2026-12-03T07:00:00Z","wait_ms":6}}})");
  EXPECT_TRUE(diff_json(old, now, IgnoreList::defaults()).empty());
  // Without the list, all but the timestamp differ (text masking still applies to strings).
  EXPECT_EQ(diff_json(old, now, IgnoreList()).size(), 8u);
}

TEST(JsonDiffTest, VolatileTextInsideStringsIsMasked) {
  const json old =
      "compile kernel.cu for sm_90a: ok (3.16 s) at 2026-12-02T06:00:00.123Z, job-0123456789abcdef";
  const json now =
      "compile kernel.cu for sm_90a: ok (cache hit, 0.01 s) at 2026-12-03T01:02:03.000Z, "
      "job-fedcba9876543210";
  EXPECT_TRUE(diff_json(old, now, IgnoreList::defaults()).empty());
  EXPECT_TRUE(diff_json(json("_ZN41_GLOBAL__N__0f530bab_9_kernel_cu_575e201b14gemmEv"),
                        json("_ZN41_GLOBAL__N__e936082b_9_kernel_cu_575e201b14gemmEv"),
                        IgnoreList::defaults())
                  .empty());
  const json other = "compile kernel.cu for sm_90a: FAILED (3.16 s)";
  EXPECT_EQ(diff_json(old, other, IgnoreList::defaults()).size(), 1u);
}

TEST(JsonDiffTest, IgnoreTakesPointersWithWildcardsAndBareKeys) {
  IgnoreList ignore;
  ASSERT_TRUE(ignore.add("/result/content/*/text"));
  ASSERT_TRUE(ignore.add("digest"));
  const json old =
      json::parse(R"({"result":{"content":[{"type":"text","text":"a"}],"x":{"digest":"1"}}})");
  const json now =
      json::parse(R"({"result":{"content":[{"type":"text","text":"b"}],"x":{"digest":"2"}}})");
  EXPECT_TRUE(diff_json(old, now, ignore).empty());
  json changed = now;
  changed["result"]["content"][0]["type"] = "image";
  auto diffs = diff_json(old, changed, ignore);
  ASSERT_EQ(diffs.size(), 1u);
  EXPECT_EQ(diffs[0].path, "/result/content/0/type");
}

TEST(JsonDiffTest, PointersEscapeSlashAndTilde) {
  EXPECT_EQ(json_pointer({"_meta", "io.modelcontextprotocol/serverInfo", "a~b"}),
            "/_meta/io.modelcontextprotocol~1serverInfo/a~0b");
  IgnoreList ignore;
  ASSERT_TRUE(ignore.add("/_meta/io.modelcontextprotocol~1serverInfo"));
  EXPECT_TRUE(ignore.ignores({"_meta", "io.modelcontextprotocol/serverInfo"}));
  EXPECT_FALSE(ignore.add("/a/~2"));
  EXPECT_FALSE(ignore.add(""));
}

TEST(JsonDiffTest, NumbersCompareByValue) {
  EXPECT_TRUE(diff_json(json::parse("1"), json::parse("1.0"), IgnoreList()).empty());
}

TEST(JsonDiffTest, KeepsAtMostTheLimitAndSaysSo) {
  json old = json::array(), now = json::array();
  for (int i = 0; i < 10; ++i) {
    old.push_back(i);
    now.push_back(i + 1);
  }
  bool truncated = false;
  auto diffs = diff_json(old, now, IgnoreList(), 3, &truncated);
  EXPECT_EQ(diffs.size(), 3u);
  EXPECT_TRUE(truncated);
}

TEST(MeasuredTextTest, MasksMeasuredNumbersAndUrlsButKeepsCountsNamesAndIds) {
  EXPECT_EQ(mask_measured_text("runner http://127.0.0.1:45221): PASSED 10/10 workloads, geomean "
                               "speedup 1.100x, scored"),
            "runner <url>): PASSED 10/10 workloads, geomean speedup <n>x, scored");
  EXPECT_EQ(mask_measured_text("16x4096x4096   PASS   100.00   99.00   0.40   20   65.7"),
            "16x4096x4096   PASS   <n>   <n>   <n>   <n>   <n>");
  EXPECT_EQ(mask_measured_text("gates: 7/7 passed; sm_90a fp16_gemm sha256 0f53ab12 ncu 2025.3.1"),
            "gates: 7/7 passed; sm_90a fp16_gemm sha256 0f53ab12 ncu 2025.3.1");
}

TEST(JsonDiffTest, VerdictsOnlyLeavesMeasuredNumbersOutButNotCountsOrStates) {
  const json old = json::parse(R"({"speedup": 1.1, "time": {"median": 100.0},
      "summary": {"passed": 10, "total": 10}, "status": "passed",
      "gates": [{"state": "passed", "passed": true}], "text": "PASSED 10/10, 1.100x"})");
  json now = old;
  now["speedup"] = 1.02;
  now["time"]["median"] = 93.5;
  now["text"] = "PASSED 10/10, 1.020x";
  EXPECT_TRUE(diff_json(old, now, IgnoreList(), 50, nullptr, Compare::kVerdictsOnly).empty());
  EXPECT_EQ(diff_json(old, now, IgnoreList()).size(), 3u);  // everything compared by default

  now["summary"]["passed"] = 9;
  now["gates"][0]["state"] = "failed";
  now["text"] = "PASSED 9/10, 1.020x";
  auto diffs = diff_json(old, now, IgnoreList(), 50, nullptr, Compare::kVerdictsOnly);
  ASSERT_EQ(diffs.size(), 3u);
  EXPECT_EQ(diffs[0].path, "/gates/0/state");
  EXPECT_EQ(diffs[1].path, "/summary/passed");
  EXPECT_EQ(diffs[2].path, "/text");
}

TEST(GlobMatchTest, StarMatchesAnyRun) {
  EXPECT_TRUE(glob_match("*_s", "elapsed_s"));
  EXPECT_FALSE(glob_match("*_s", "elapsed_ms_x"));
  EXPECT_TRUE(glob_match("a*b*c", "aXXbYc"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_FALSE(glob_match("abc", "abd"));
}

}  // namespace
}  // namespace kiln::replay
