// search_zoo against kb/zoo/search_queries.json: what agents ask while optimizing, each query
// with the entry it should find. Every query goes through the tool as an MCP client calls it;
// the misses and the top-1/top-3 accuracy are printed, and the accuracy must stay above floors
// measured when the set was written (kb/README.md, Search quality).
#include <gtest/gtest.h>

#include <iostream>
#include <set>

#include "kiln/kb/kb_service.h"
#include "kiln/kb/search_quality.h"
#include "kiln/mcp/tool_registry.h"
#include "kiln/tools/tool_factories.h"
#include "support/temp_dir.h"

namespace kiln::tools {
namespace {

using json = nlohmann::json;

// Floors a little under what the set scored on 2026-12-03 (top-1 72/80, top-3 77/80), so a
// ranking change that loses more than a few queries fails here instead of going unnoticed.
constexpr double kTop1Floor = 0.85;
constexpr double kTop3Floor = 0.925;

const std::filesystem::path kKbDir = KILN_KB_DIR;

class ZooSearchQualityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The real zoo; no CCCL headers, which search_zoo never reads.
    kb_ = std::make_shared<kb::KbService>(
        kb::KbPaths{kKbDir, dir_.path() / "no_cccl", dir_.path() / "cache"},
        std::chrono::milliseconds(0));
    auto status = tools_.add(make_search_zoo_tool(kb_));
    ASSERT_TRUE(status) << status.error().message;
  }

  std::vector<std::string> search(const std::string& query) {
    auto context = mcp::CallContext::detached();
    auto result = tools_.run("search_zoo", {{"query", query}, {"limit", 3}}, context);
    EXPECT_FALSE(result.is_error) << query << ": " << result.text;
    std::vector<std::string> ids;
    for (const auto& hit : result.structured.value("hits", json::array()))
      ids.push_back(hit["id"].get<std::string>());
    return ids;
  }

  kiln::testing::TempDir dir_;
  std::shared_ptr<kb::KbService> kb_;
  mcp::ToolRegistry tools_;
};

TEST_F(ZooSearchQualityTest, TheQuerySetNamesEveryEntryAndOnlyEntries) {
  auto cases = kb::load_search_cases(kKbDir / "zoo" / "search_queries.json");
  ASSERT_TRUE(cases) << cases.error().message;
  EXPECT_GE(cases->size(), 48u);
  auto index = kb_->index();
  ASSERT_TRUE(index) << index.error().message;
  const auto ids = (*index)->zoo_ids();
  const std::set<std::string> known(ids.begin(), ids.end());
  std::set<std::string> expected;
  for (const auto& c : *cases) {
    EXPECT_TRUE(known.count(c.expect)) << "\"" << c.query << "\" expects no entry " << c.expect;
    for (const auto& id : c.also)
      EXPECT_TRUE(known.count(id)) << "\"" << c.query << "\" also names no entry " << id;
    expected.insert(c.expect);
  }
  for (const auto& id : ids)
    EXPECT_TRUE(expected.count(id)) << "no query expects " << id << "; add one to the set";
}

TEST_F(ZooSearchQualityTest, RanksTheExpectedEntryFirstOftenEnough) {
  auto cases = kb::load_search_cases(kKbDir / "zoo" / "search_queries.json");
  ASSERT_TRUE(cases) << cases.error().message;
  const auto quality =
      kb::score_search(*cases, [&](const std::string& query) { return search(query); });
  std::cout << quality.report();
  EXPECT_GE(quality.top1_rate(), kTop1Floor) << quality.report();
  EXPECT_GE(quality.top3_rate(), kTop3Floor) << quality.report();
}

}  // namespace
}  // namespace kiln::tools
