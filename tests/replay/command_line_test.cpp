#include "kiln/replay/command_line.h"

#include <gtest/gtest.h>

namespace kiln::replay {
namespace {

using Words = std::vector<std::string>;

TEST(CommandLineTest, SplitsAtWhitespaceAndKeepsQuotedWordsWhole) {
  auto words = split_command_line(R"(  /opt/kiln --tasks-dir "/my tasks" mcp 'a b' c\ d "x\"y")");
  ASSERT_TRUE(words) << words.error().message;
  EXPECT_EQ(*words, (Words{"/opt/kiln", "--tasks-dir", "/my tasks", "mcp", "a b", "c d", "x\"y"}));
}

TEST(CommandLineTest, AnEmptyQuotedWordIsAWord) {
  auto words = split_command_line(R"(kiln "")");
  ASSERT_TRUE(words);
  EXPECT_EQ(*words, (Words{"kiln", ""}));
}

TEST(CommandLineTest, RefusesAnUnclosedQuoteAndNothing) {
  EXPECT_FALSE(split_command_line("kiln 'mcp"));
  EXPECT_FALSE(split_command_line("   "));
}

}  // namespace
}  // namespace kiln::replay
