// The corpus: every committed and generated PTX file parses without warnings, prints back to
// the same structure, passes ptxas after printing, and survives every analysis.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "kiln/ptx/def_use.h"
#include "kiln/ptx/function_analysis.h"
#include "kiln/ptx/printer.h"
#include "ptx_test_support.h"

namespace kiln::ptx {
namespace {

using testing::CorpusEntry;

class Corpus : public ::testing::TestWithParam<CorpusEntry> {
 protected:
  // The entry's text; skips entries whose generation failed (a zoo kernel someone is still
  // writing) and fails when the build never generated the file.
  void load(std::string& text) {
    const CorpusEntry& e = GetParam();
    if (!std::filesystem::exists(e.path)) {
      FAIL() << e.path << " is missing: build the kiln_ptx_corpus target";
    }
    text = testing::read_text(e.path);
    if (text.starts_with("// kiln: nvcc failed")) {
      if (e.name.starts_with("zoo_")) {
        GTEST_SKIP() << "nvcc could not compile this zoo entry:\n" << text;
      }
      FAIL() << "nvcc could not compile a corpus source:\n" << text;
    }
  }
};

TEST_P(Corpus, ParsesWithoutWarnings) {
  std::string text;
  load(text);
  if (IsSkipped() || HasFailure()) return;
  Result<ParsedModule> parsed = parse_ptx(text, {GetParam().path});
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  for (const Diagnostic& w : parsed->warnings) ADD_FAILURE() << w.to_string(GetParam().path);
  EXPECT_FALSE(parsed->module.functions.empty());
}

TEST_P(Corpus, PrintsBackToTheSameStructure) {
  std::string text;
  load(text);
  if (IsSkipped() || HasFailure()) return;
  Result<ParsedModule> first = parse_ptx(text);
  ASSERT_TRUE(first.ok()) << first.error().message;
  const std::string printed = print_module(first->module);
  Result<ParsedModule> second = parse_ptx(printed, {"printed.ptx"});
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(print_module(second->module), printed);
  Module a = std::move(first->module);
  Module b = std::move(second->module);
  clear_source_locations(a);
  clear_source_locations(b);
  EXPECT_TRUE(a == b);
}

TEST_P(Corpus, PtxasAcceptsThePrintedModule) {
  const std::string ptxas = KILN_PTXAS;
  if (ptxas.empty()) GTEST_SKIP() << "no CUDA toolkit: ptxas is not available";
  std::string text;
  load(text);
  if (IsSkipped() || HasFailure()) return;
  Result<ParsedModule> parsed = parse_ptx(text);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("kiln_ptx_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / (GetParam().name + ".ptx");
  const std::filesystem::path log = dir / (GetParam().name + ".log");
  {
    std::ofstream out(file);
    out << print_module(parsed->module);
  }
  const std::string command = "'" + ptxas + "' -arch=" + GetParam().arch + " '" + file.string() +
                              "' -o /dev/null > '" + log.string() + "' 2>&1";
  const int status = std::system(command.c_str());
  EXPECT_EQ(status, 0) << command << "\n" << testing::read_text(log.string());
  std::filesystem::remove_all(dir);
}

TEST_P(Corpus, SurvivesEveryAnalysis) {
  std::string text;
  load(text);
  if (IsSkipped() || HasFailure()) return;
  Result<ParsedModule> parsed = parse_ptx(text);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  for (const Function& f : parsed->module.functions) {
    if (!f.has_body) continue;
    std::unique_ptr<FunctionAnalysis> a = analyze_function(f);
    const ControlFlowGraph& cfg = a->cfg;
    for (BlockId b : cfg.reverse_post_order()) {
      // Every reachable block's dominator chain ends at the entry; its post-dominator chain at
      // the exit.
      BlockId x = b;
      for (uint32_t steps = 0; x != cfg.entry() && steps <= cfg.size(); ++steps)
        x = a->dominators.idom(x);
      EXPECT_EQ(x, cfg.entry()) << f.name << " block " << b;
      x = b;
      for (uint32_t steps = 0; x != cfg.exit() && x != kNone && steps <= cfg.size(); ++steps) {
        x = a->post_dominators.idom(x);
      }
      EXPECT_EQ(x, cfg.exit()) << f.name << " block " << b;
    }
    for (const DivergentBranch& d : a->uniformity.divergent_branches()) {
      EXPECT_TRUE(a->post_dominators.dominates(d.reconvergence, d.block)) << f.name;
    }
    // Every register a reachable instruction reads has a reaching write or is visibly undefined.
    for (InstructionId i = 0; i < f.instructions.size(); ++i) {
      if (!cfg.reachable(cfg.block_of(i))) continue;
      std::vector<RegisterId> uses;
      append_uses(f.instructions[i], uses);
      for (RegisterId r : uses) {
        EXPECT_TRUE(!a->reaching.reaching(i, r).empty() || a->reaching.may_be_undefined(i, r));
      }
    }
  }
}

std::string entry_name(const ::testing::TestParamInfo<CorpusEntry>& info) {
  std::string name;
  for (char c : info.param.name) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Ptx, Corpus, ::testing::ValuesIn(testing::corpus_entries()), entry_name);

TEST(CorpusManifest, ListsTheCommittedFiles) {
  size_t committed = 0;
  for (const CorpusEntry& e : testing::corpus_entries())
    committed += e.name.starts_with("committed_");
  EXPECT_GE(committed, 5u);
}

}  // namespace
}  // namespace kiln::ptx
