#include "kiln/mcp/completion.h"

#include <gtest/gtest.h>

namespace kiln::mcp {
namespace {

using json = nlohmann::json;

TEST(CompletionTest, KeepsCandidatesWithThePrefixInOrder) {
  json result = completion_result({"beta", "alpha", "alps", "gamma"}, "al");
  EXPECT_EQ(result["completion"]["values"], json::array({"alpha", "alps"}));
  EXPECT_EQ(result["completion"]["total"], 2);
  EXPECT_EQ(result["completion"]["hasMore"], false);
}

TEST(CompletionTest, CapsValuesAtOneHundredAndSaysThereIsMore) {
  std::vector<std::string> many;
  for (int i = 0; i < 150; ++i) many.push_back("s" + std::to_string(i));
  json result = completion_result(many, "s");
  EXPECT_EQ(result["completion"]["values"].size(), kMaxCompletionValues);
  EXPECT_EQ(result["completion"]["total"], 150);
  EXPECT_EQ(result["completion"]["hasMore"], true);
}

TEST(CompletionTest, ContextKeepsOnlyStringArguments) {
  auto context = completion_context({{"context", {{"arguments", {{"id", "a"}, {"n", 3}}}}}});
  EXPECT_EQ(context, (std::map<std::string, std::string>{{"id", "a"}}));
  EXPECT_TRUE(completion_context(json::object()).empty());
  EXPECT_TRUE(completion_context({{"context", "x"}}).empty());
}

}  // namespace
}  // namespace kiln::mcp
