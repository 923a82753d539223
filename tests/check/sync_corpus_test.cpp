// The tests/corpus/sync pairs: each kernel's header says its verdict, and a bad kernel marks
// the line of the expected finding with "// expect: <kind>" (an error) or
// "// expect: <kind> warning". The engine must agree exactly: a bad kernel yields a finding of
// that kind and severity on that line, a good one yields nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "kiln/base/file.h"
#include "kiln/check/static_synccheck.h"
#include "kiln/ptx/parser.h"

namespace kiln::check {
namespace {

struct ExpectedFinding {
  uint32_t line = 0;
  std::string kind;
  std::string severity;  // "error" unless the line says "warning"
};

struct CorpusKernel {
  std::string name;                       // file name without .cu
  std::string expect;                     // "clean" or "findings"
  std::vector<ExpectedFinding> expected;  // one per marked line
};

bool matches(const ExpectedFinding& e, const Finding& f) {
  return f.source_line == e.line && finding_kind_name(f.kind) == e.kind &&
         severity_name(f.severity) == e.severity;
}

std::vector<CorpusKernel> corpus() {
  std::vector<CorpusKernel> kernels;
  std::error_code ec;
  if (!std::filesystem::is_directory(KILN_SYNC_CORPUS_SOURCE_DIR, ec)) return kernels;
  static const std::regex kExpectHeader(R"(//\s*kiln-sync:\s*expect=(\w+))");
  static const std::regex kExpectLine(R"(//\s*expect:\s*(\w+)(?:\s+(error|warning))?)");
  for (const auto& entry : std::filesystem::directory_iterator(KILN_SYNC_CORPUS_SOURCE_DIR)) {
    if (entry.path().extension() != ".cu") continue;
    CorpusKernel k;
    k.name = entry.path().stem().string();
    std::ifstream in(entry.path());
    std::string line;
    for (uint32_t number = 1; std::getline(in, line); ++number) {
      std::smatch m;
      if (std::regex_search(line, m, kExpectHeader)) {
        k.expect = m[1];
      } else if (std::regex_search(line, m, kExpectLine)) {
        k.expected.push_back({number, m[1], m[2].matched ? m[2].str() : "error"});
      }
    }
    kernels.push_back(std::move(k));
  }
  std::sort(kernels.begin(), kernels.end(),
            [](const CorpusKernel& a, const CorpusKernel& b) { return a.name < b.name; });
  return kernels;
}

void PrintTo(const CorpusKernel& k, std::ostream* os) { *os << k.name; }

class SyncCorpusTest : public ::testing::TestWithParam<CorpusKernel> {};

TEST_P(SyncCorpusTest, VerdictAndFindingsMatchTheFile) {
  const CorpusKernel& k = GetParam();
  const std::string path = std::string(KILN_SYNC_CORPUS_PTX_DIR) + "/" + k.name + ".ptx";
  const auto text = read_file(path);
  ASSERT_TRUE(text.ok()) << text.error().message;
  auto parsed = ptx::parse_ptx(*text, {path});
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const CheckReport report = static_synccheck(parsed->module);
  std::string listing;
  for (const Finding& f : report.findings) listing += to_string(f) + "\n";
  for (const std::string& n : report.notes) listing += "note: " + n + "\n";

  ASSERT_TRUE(k.expect == "clean" || k.expect == "findings")
      << k.name << " has no '// kiln-sync: expect=clean|findings' header";
  if (k.expect == "clean") {
    EXPECT_EQ(report.verdict, Verdict::Clean) << listing;
    return;
  }
  EXPECT_EQ(report.verdict, Verdict::Findings) << listing;
  ASSERT_FALSE(k.expected.empty()) << k.name << " marks no '// expect: <kind>' line";
  for (const ExpectedFinding& e : k.expected) {
    const bool found = std::any_of(report.findings.begin(), report.findings.end(),
                                   [&](const Finding& f) { return matches(e, f); });
    EXPECT_TRUE(found) << "expected " << e.severity << " " << e.kind << " at line " << e.line
                       << "\n"
                       << listing;
  }
  for (const Finding& f : report.findings) {
    const bool expected = std::any_of(k.expected.begin(), k.expected.end(),
                                      [&](const ExpectedFinding& e) { return matches(e, f); });
    EXPECT_TRUE(expected) << "unexpected finding: " << to_string(f);
  }
}

std::string kernel_name(const ::testing::TestParamInfo<CorpusKernel>& info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, SyncCorpusTest, ::testing::ValuesIn(corpus()), kernel_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SyncCorpusTest);

TEST(SyncCorpus, HoldsAtLeastThirtyKernels) {
  if (corpus().empty()) GTEST_SKIP() << "tests/corpus/sync is not there yet";
  EXPECT_GE(corpus().size(), 30u);
}

}  // namespace
}  // namespace kiln::check
