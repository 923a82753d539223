#include "kiln/check/sanitizer_findings.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace kiln::check {
namespace {

using json = nlohmann::json;

json tool_entry(const std::string& tool, json findings) {
  return {{"tool", tool}, {"findings", std::move(findings)}, {"distinct_findings", 1}};
}

TEST(SanitizerFindings, TurnsARaceIntoADataRaceFinding) {
  const json tools = json::array({tool_entry(
      "racecheck",
      json::array({{{"tool", "racecheck"},
                    {"severity", "error"},
                    {"kind", "Race reported between Write access"},
                    {"kernel", "reduce(float*)"},
                    {"file", "kernel.cu"},
                    {"line", 17},
                    {"detail", "and Read access at reduce(float*)+0x2a0 in kernel.cu:21"},
                    {"count", 3}}}))});
  const CheckReport r = report_from_sanitizer(tools, "racecheck");
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.verdict, Verdict::Findings);
  const Finding& f = r.findings[0];
  EXPECT_EQ(f.kind, FindingKind::DataRace);
  EXPECT_EQ(f.source_file, "kernel.cu");
  EXPECT_EQ(f.source_line, 17u);
  EXPECT_EQ(f.function, "reduce(float*)");
  EXPECT_NE(f.message.find("3 times"), std::string::npos);
  EXPECT_NE(f.message.find("kernel.cu:21"), std::string::npos);
  EXPECT_FALSE(f.fix_hint.empty());
}

TEST(SanitizerFindings, MapsBarrierErrorsToBarrierDivergence) {
  const json tools = json::array({tool_entry(
      "synccheck", json::array({{{"kind", "Barrier error detected. Divergent thread(s) in block."},
                                 {"severity", "error"}},
                                {{"kind", "Barrier error detected. Divergent thread(s) in warp."},
                                 {"severity", "error"}}}))});
  const CheckReport r = report_from_sanitizer(tools, "synccheck");
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].kind, FindingKind::BarrierDivergence);
  // What an H200 reports for a __syncthreads() inside `if (threadIdx.x < half)` with
  // half < 32 (tests/worker/fixtures/h200/sanitize_synccheck_barrier_in_branch.txt).
  EXPECT_EQ(r.findings[1].kind, FindingKind::BarrierDivergence);
}

TEST(SanitizerFindings, IsCleanWhenTheToolRanAndFoundNothing) {
  const CheckReport r =
      report_from_sanitizer(json::array({tool_entry("synccheck", json::array())}), "synccheck");
  EXPECT_EQ(r.verdict, Verdict::Clean);
}

TEST(SanitizerFindings, IsIncompleteWhenTheToolDidNotRun) {
  json broken = tool_entry("synccheck", json::array());
  broken["tool_failed"] = true;
  broken["tool_message"] = "Device not supported";
  CheckReport r = report_from_sanitizer(json::array({broken}), "synccheck");
  EXPECT_EQ(r.verdict, Verdict::Incomplete);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("Device not supported"), std::string::npos);

  r = report_from_sanitizer(json::array({tool_entry("memcheck", json::array())}), "synccheck");
  EXPECT_EQ(r.verdict, Verdict::Incomplete);
  EXPECT_EQ(report_from_sanitizer(json::object(), "racecheck").verdict, Verdict::Incomplete);
}

}  // namespace
}  // namespace kiln::check
