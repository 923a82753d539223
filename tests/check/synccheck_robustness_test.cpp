// Randomized robustness of the static synccheck: corpus PTX mutated (tests/ptx/ptx_mutation.h);
// whatever still parses goes through every check, which must never crash, hang or throw.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

#include "kiln/check/static_synccheck.h"
#include "kiln/ptx/parser.h"
#include "ptx/ptx_mutation.h"
#include "ptx/ptx_test_support.h"

namespace kiln::check {
namespace {

int iterations() {
  if (const char* s = std::getenv("KILN_SYNC_FUZZ_ITERATIONS")) return std::atoi(s);
  return 1500;
}

TEST(SynccheckRobustness, MutatedKernelsNeverCrashHangOrThrow) {
  const std::vector<std::string> sources = {ptx::testing::committed("divergent_barrier.sm80.ptx"),
                                            ptx::testing::committed("cp_async.sm80.ptx"),
                                            ptx::testing::committed("wgmma.sm90a.ptx"),
                                            ptx::testing::committed("tma_mbarrier.sm90a.ptx"),
                                            ptx::testing::committed("features.sm90a.ptx")};
  std::vector<std::vector<ptx::testing::Span>> tokens, lines;
  for (const std::string& s : sources) {
    ASSERT_FALSE(s.empty());
    tokens.push_back(ptx::testing::token_spans(s));
    lines.push_back(ptx::testing::line_spans(s));
  }
  std::mt19937_64 rng(20261129);
  int checked = 0, with_findings = 0;
  double slowest_ms = 0;
  for (int i = 0; i < iterations(); ++i) {
    const size_t which = static_cast<size_t>(i) % sources.size();
    const std::string mutant =
        ptx::testing::mutate(sources[which], tokens[which], lines[which], rng);
    auto parsed = ptx::parse_ptx(mutant, {"mutant.ptx"});
    if (!parsed) continue;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      const CheckReport report = static_synccheck(parsed->module);
      ++checked;
      with_findings += report.verdict == Verdict::Findings;
      for (const Finding& f : report.findings) {
        EXPECT_FALSE(f.message.empty()) << "case " << i;
        EXPECT_FALSE(f.fix_hint.empty()) << "case " << i;
      }
    } catch (const std::exception& e) {
      ADD_FAILURE() << "case " << i << " threw: " << e.what() << "\n" << mutant;
    }
    slowest_ms = std::max(
        slowest_ms,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (HasFailure()) break;
  }
  std::printf("synccheck robustness: %d mutants checked, %d with findings, slowest %.2f ms\n",
              checked, with_findings, slowest_ms);
  EXPECT_GT(checked, iterations() / 10);
  EXPECT_LT(slowest_ms, 1000.0);
}

}  // namespace
}  // namespace kiln::check
