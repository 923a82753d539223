// live.log lines: one per evaluation and per frontier decision, appended whole.
#include "kiln/frontier/live_log.h"

#include <gmock/gmock.h>

#include <thread>

#include "frontier_fixture.h"

namespace kiln::frontier::testing {
namespace {

using ::testing::HasSubstr;

StoredResult stored(const json& result) {
  StoredResult r;
  r.id = "r-0123456789abcdef";
  r.created_ms = 1764547200000;  // 2025-12-01T00:00:00Z
  r.kind = "benchmark";
  r.candidate_sha256 = std::string(64, 'c');
  r.status = result.value("status", "");
  r.scored = result["summary"].value("scored", false);
  if (result["summary"]["geomean_speedup"].is_number())
    r.geomean_speedup = result["summary"]["geomean_speedup"].get<double>();
  r.source_path = "worktree/candidates/fp16_gemm/scratch/kernel.cu";
  r.result = result;
  return r;
}

TEST(LiveLog, AnEvaluationLineHasTheCandidateTheScoreAndEveryWorkload) {
  const std::string line = evaluation_line(stored(benchmark_result(kernel("a"))), "benchmark");
  EXPECT_THAT(line, HasSubstr("2025-12-01T00:00:00.000Z benchmark r-0123456789abcdef"));
  EXPECT_THAT(line, HasSubstr("candidate=worktree/candidates/fp16_gemm/scratch/kernel.cu"));
  EXPECT_THAT(line, HasSubstr("status=passed geomean=1.100x passed=10/10 scored=yes gate=-"));
  EXPECT_THAT(line, HasSubstr("4096x4096x4096 PASS 100.0us cv=0.40% 1.100x"));
  EXPECT_THAT(line, HasSubstr("4000x3000x2000 PASS 109.0us"));
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

TEST(LiveLog, AFailedGateIsNamed) {
  const std::string line = evaluation_line(
      stored(benchmark_result(kernel("a"), with_gate("guard_bands", "failed", "failed"))),
      "benchmark");
  EXPECT_THAT(line, HasSubstr("status=failed geomean=- "));
  EXPECT_THAT(line, HasSubstr("gate=\"guard_bands (failed: fake breakage)\""));
}

TEST(LiveLog, ADecisionLineHasTheVerdictAndTheReason) {
  Decision d;
  d.created_ms = 1764547200000;
  d.result_id = "r-0123456789abcdef";
  d.name = "tiled";
  d.verdict = "refused";
  d.reason = "1.05x does not beat \"best\"";
  d.numbers = {{"geomean", 1.05}};
  EXPECT_EQ(decision_line(d),
            "2025-12-01T00:00:00.000Z frontier r-0123456789abcdef name=tiled decision=refused "
            "geomean=1.050x reason=\"1.05x does not beat \\\"best\\\"\"");
}

TEST(LiveLog, LinesFromManyWritersNeverInterleave) {
  TempDir dir;
  const auto file = dir / "live.log";
  const std::string long_line(3000, 'x');
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t)
    writers.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i)
        ASSERT_TRUE(append_line(file, std::to_string(t) + long_line).ok());
    });
  for (auto& w : writers) w.join();
  std::istringstream lines(read_text(file));
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    ++count;
    EXPECT_EQ(line.size(), long_line.size() + 1);
  }
  EXPECT_EQ(count, 200);
}

}  // namespace
}  // namespace kiln::frontier::testing
