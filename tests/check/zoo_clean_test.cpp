// Static synccheck must report nothing on a correct kernel: every zoo kernel and task starter
// of the PTX corpus (generated with -lineinfo for sm_80 and sm_90a).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/base/file.h"
#include "kiln/check/static_synccheck.h"
#include "kiln/ptx/parser.h"

namespace kiln::check {
namespace {

struct CorpusEntry {
  std::string name;
  std::string path;
};

std::vector<CorpusEntry> correct_kernels() {
  std::vector<CorpusEntry> entries;
  std::ifstream manifest(KILN_PTX_CORPUS_MANIFEST);
  std::string line;
  while (std::getline(manifest, line)) {
    std::istringstream fields(line);
    CorpusEntry e;
    std::string arch;
    if (!(fields >> e.name >> arch >> e.path)) continue;
    if (e.name.starts_with("zoo_") || e.name.starts_with("starter_")) entries.push_back(e);
  }
  return entries;
}

void PrintTo(const CorpusEntry& e, std::ostream* os) { *os << e.name; }

class ZooCleanTest : public ::testing::TestWithParam<CorpusEntry> {};

TEST_P(ZooCleanTest, ReportsNoFindings) {
  const auto text = read_file(GetParam().path);
  ASSERT_TRUE(text.ok()) << text.error().message;
  auto parsed = ptx::parse_ptx(*text, {GetParam().path});
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const CheckReport report = static_synccheck(parsed->module);
  std::string listing;
  for (const Finding& f : report.findings) listing += to_string(f) + "\n";
  for (const std::string& n : report.notes) listing += "note: " + n + "\n";
  EXPECT_EQ(report.verdict, Verdict::Clean) << listing;
}

std::string entry_name(const ::testing::TestParamInfo<CorpusEntry>& info) {
  std::string name = info.param.name;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, ZooCleanTest, ::testing::ValuesIn(correct_kernels()), entry_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ZooCleanTest);

}  // namespace
}  // namespace kiln::check
