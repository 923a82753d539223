// Randomized robustness: mutate corpus PTX (delete, duplicate and swap tokens and lines,
// truncate, insert random bytes) and require that the parser never crashes, hangs or throws,
// that every failure is an error with a line, and that whatever parses also survives the
// analyses and prints back to text that parses again.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "kiln/ptx/function_analysis.h"
#include "kiln/ptx/lexer.h"
#include "kiln/ptx/printer.h"
#include "ptx_mutation.h"
#include "ptx_test_support.h"

namespace kiln::ptx {
namespace {

using testing::line_spans;
using testing::mutate;
using testing::Span;
using testing::token_spans;

uint64_t seed() {
  if (const char* s = std::getenv("KILN_PTX_FUZZ_SEED")) return std::strtoull(s, nullptr, 10);
  return 20250101;
}

int iterations() {
  if (const char* s = std::getenv("KILN_PTX_FUZZ_ITERATIONS")) return std::atoi(s);
  return 3000;
}

TEST(Robustness, MutatedCorpusNeverCrashesHangsOrThrows) {
  const std::vector<std::string> sources = {testing::committed("divergent_barrier.sm80.ptx"),
                                            testing::committed("loops.sm80.ptx"),
                                            testing::committed("globals.sm90a.ptx"),
                                            testing::committed("features.sm90a.ptx"),
                                            testing::committed("wgmma.sm90a.ptx"),
                                            testing::committed("tma_mbarrier.sm90a.ptx")};
  std::vector<std::vector<Span>> tokens, lines;
  for (const std::string& s : sources) {
    ASSERT_FALSE(s.empty());
    tokens.push_back(token_spans(s));
    lines.push_back(line_spans(s));
  }
  std::mt19937_64 rng(seed());
  int failures = 0, successes = 0;
  double slowest_ms = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations(); ++i) {
    const size_t which = i % sources.size();
    const std::string mutant = mutate(sources[which], tokens[which], lines[which], rng);
    const auto t0 = std::chrono::steady_clock::now();
    try {
      ParseOutcome outcome = parse_ptx_with_diagnostics(mutant, {"mutant.ptx"});
      if (!outcome.module) {
        ++failures;
        ASSERT_FALSE(outcome.diagnostics.empty()) << "case " << i;
        const Diagnostic& error = outcome.diagnostics.back();
        EXPECT_EQ(error.severity, Severity::Error) << "case " << i;
        EXPECT_GT(error.location.line, 0u) << "case " << i << ": " << error.message;
        EXPECT_FALSE(error.message.empty()) << "case " << i;
        Result<ParsedModule> r = parse_ptx(mutant, {"mutant.ptx"});
        ASSERT_FALSE(r.ok());
        EXPECT_EQ(r.error().message.rfind("mutant.ptx:", 0), 0u) << r.error().message;
      } else {
        ++successes;
        for (const Function& f : outcome.module->functions) {
          if (f.has_body) analyze_function(f);
        }
        const std::string printed = print_module(*outcome.module);
        Result<ParsedModule> again = parse_ptx(printed, {"reprinted.ptx"});
        EXPECT_TRUE(again.ok()) << "case " << i << ": " << again.error().message << "\n" << printed;
      }
    } catch (const std::exception& e) {
      ADD_FAILURE() << "case " << i << " threw: " << e.what();
    } catch (...) {
      ADD_FAILURE() << "case " << i << " threw a non-standard exception";
    }
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    slowest_ms = std::max(slowest_ms, ms);
    if (HasFailure()) {
      ADD_FAILURE() << "first failing case " << i << " (seed " << seed() << "):\n" << mutant;
      break;
    }
  }
  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RecordProperty("cases", iterations());
  RecordProperty("parse_failures", failures);
  std::printf("robustness: %d cases (%d rejected, %d accepted) in %.2f s, slowest %.2f ms\n",
              iterations(), failures, successes, total_s, slowest_ms);
  EXPECT_LT(slowest_ms, 1000.0) << "one case took too long: a hang in the making";
  EXPECT_GT(failures, 0);
  EXPECT_GT(successes, 0);
}

TEST(Robustness, RejectsPathologicalInputsQuickly) {
  const std::vector<std::string> inputs = {
      std::string(100000, '{'),
      std::string(100000, '}'),
      testing::kernel(std::string(300, '{')),
      testing::kernel("mov.u32 %r1, " + std::string(5000, '-') + "1;"),
      testing::kernel(".reg .b32 %x<4294967295>;\nmov.u32 %x4294967294, 1;"),
      testing::kernel("ld.global.u32 %r1, [[[[[[[[%rd1]]]]]]]];"),
      testing::kernel("mov.b32 %r1, {{{{{{{{{{%r2}}}}}}}}}};"),
      std::string(testing::kHeader) + ".global .b32 x[99999999999999999999];",
      std::string(testing::kHeader) + ".global .b8 x[18446744073709551615][18446744073709551615];",
      std::string("\0\0\0", 3),
      "\xEF\xBB\xBF.version 9.0",
  };
  for (const std::string& text : inputs) {
    const auto t0 = std::chrono::steady_clock::now();
    ParseOutcome outcome = parse_ptx_with_diagnostics(text);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(ms, 500.0);
    if (!outcome.module) {
      EXPECT_GT(outcome.diagnostics.back().location.line, 0u) << outcome.diagnostics.back().message;
    } else {
      for (const Function& f : outcome.module->functions) {
        if (f.has_body) analyze_function(f);
      }
      for (const Variable& v : outcome.module->variables) (void)v.size_bytes();
    }
  }
}

}  // namespace
}  // namespace kiln::ptx
