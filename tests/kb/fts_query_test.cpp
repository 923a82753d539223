#include "kiln/kb/fts_query.h"

#include <gtest/gtest.h>

namespace kiln::kb {
namespace {

TEST(FtsQuery, QuotesEachWordAndJoinsWithOr) {
  auto query = make_fts_query("mbarrier parity wait");
  EXPECT_EQ(query.terms, (std::vector<std::string>{"mbarrier", "parity", "wait"}));
  EXPECT_EQ(query.expression, "\"mbarrier\" OR \"parity\" OR \"wait\"");
}

TEST(FtsQuery, SyntaxCharactersNeverReachTheExpression) {
  for (const char* text :
       {"\"unbalanced", "tma*", "NEAR(a b)", "-wgmma", "col:value", "a AND OR NOT b", "(((",
        "'; DROP TABLE zoo; --", "^start", "{x y}", "a+b", "x.y.z"}) {
    auto query = make_fts_query(text);
    for (const auto& term : query.terms) {
      for (char c : term)
        EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c))) << text << " -> " << term;
    }
  }
  EXPECT_EQ(make_fts_query("NEAR(x y)").expression, "\"near\" OR \"x\" OR \"y\"");
  EXPECT_EQ(make_fts_query("cp.async.bulk").terms,
            (std::vector<std::string>{"cp", "async", "bulk"}));
}

TEST(FtsQuery, DropsStopWordsUnlessNothingElseIsLeft) {
  EXPECT_EQ(make_fts_query("how to use the tma").terms, std::vector<std::string>{"tma"});
  EXPECT_EQ(make_fts_query("the of").terms, (std::vector<std::string>{"the", "of"}));
}

TEST(FtsQuery, EmptyPunctuationAndHugeInputsAreBounded) {
  EXPECT_TRUE(make_fts_query("").empty());
  EXPECT_TRUE(make_fts_query("  \"*:-()  ").empty());
  EXPECT_EQ(make_fts_query("Wait WAIT wait").terms, std::vector<std::string>{"wait"});
  std::string many;
  for (int i = 0; i < 100; ++i) many += "w" + std::to_string(i) + " ";
  EXPECT_EQ(make_fts_query(many).terms.size(), 16u);
  EXPECT_TRUE(make_fts_query(std::string(1000, 'x')).empty());  // one 1000-byte "word" is dropped
}

TEST(FtsQuery, CompoundsJoinAdjacentWordsAfterTheWordsThemselves) {
  EXPECT_EQ(make_fts_query("split-K gemm", true).terms,
            (std::vector<std::string>{"split", "k", "gemm", "splitk", "kgemm"}));
  // Common words neither join nor count; a compound already among the words is not repeated.
  EXPECT_EQ(make_fts_query("the layer norm of rows", true).terms,
            (std::vector<std::string>{"layer", "norm", "rows", "layernorm"}));
  EXPECT_EQ(make_fts_query("ping pong pingpong", true).terms,
            (std::vector<std::string>{"ping", "pong", "pingpong", "pongpingpong"}));
  EXPECT_EQ(make_fts_query("split k").terms, (std::vector<std::string>{"split", "k"}));
  std::string many;
  for (int i = 0; i < 100; ++i) many += "w" + std::to_string(i) + " ";
  EXPECT_EQ(make_fts_query(many, true).terms.size(), 24u);
}

}  // namespace
}  // namespace kiln::kb
