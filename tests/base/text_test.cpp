// text.h: trim, trim_end, utf8_prefix and join.
#include "kiln/base/text.h"

#include <gtest/gtest.h>

#include <array>
#include <set>
#include <string>
#include <vector>

namespace kiln {
namespace {

TEST(Trim, DropsLeadingAndTrailingWhitespace) {
  EXPECT_EQ(trim("  a b \t"), "a b");
  EXPECT_EQ(trim("\r\n\v\fx\n"), "x");
  EXPECT_EQ(trim("x"), "x");
}

TEST(Trim, KeepsInnerWhitespace) { EXPECT_EQ(trim(" a \n b "), "a \n b"); }

TEST(Trim, AllWhitespaceOrEmptyIsEmpty) {
  EXPECT_EQ(trim(""), "");
  EXPECT_EQ(trim(" \t\r\n"), "");
}

TEST(Trim, ReturnsAViewIntoItsArgument) {
  const std::string text = "  word  ";
  const std::string_view trimmed = trim(text);
  EXPECT_EQ(trimmed.data(), text.data() + 2);
  EXPECT_EQ(trimmed.size(), 4u);
}

TEST(Trim, LeavesNonAsciiBytesAlone) { EXPECT_EQ(trim("\xc2\xa0x\xc2\xa0"), "\xc2\xa0x\xc2\xa0"); }

TEST(TrimEnd, DropsOnlyTrailingWhitespace) {
  EXPECT_EQ(trim_end("  secret \r\n"), "  secret");
  EXPECT_EQ(trim_end("\n\t "), "");
  EXPECT_EQ(trim_end(""), "");
  EXPECT_EQ(trim_end("x"), "x");
}

TEST(Utf8Prefix, KeepsTextThatFits) {
  EXPECT_EQ(utf8_prefix("abc", 3), "abc");
  EXPECT_EQ(utf8_prefix("abc", 10), "abc");
  EXPECT_EQ(utf8_prefix("abcdef", 4), "abcd");
}

TEST(Utf8Prefix, NeverEndsInsideACharacter) {
  const std::string text = "a\u00e9\u4e2d\U0001F600";  // 1, 2, 3 and 4 bytes
  EXPECT_EQ(utf8_prefix(text, 1), "a");
  EXPECT_EQ(utf8_prefix(text, 2), "a");
  EXPECT_EQ(utf8_prefix(text, 3), "a\u00e9");
  EXPECT_EQ(utf8_prefix(text, 5), "a\u00e9");
  EXPECT_EQ(utf8_prefix(text, 6), "a\u00e9\u4e2d");
  EXPECT_EQ(utf8_prefix(text, 9), "a\u00e9\u4e2d");
  EXPECT_EQ(utf8_prefix(text, 10), text);
  EXPECT_EQ(utf8_prefix(text, 0), "");
}

TEST(Join, PutsTheSeparatorBetweenEachTwo) {
  EXPECT_EQ(join(std::vector<std::string>{"a", "b", "c"}, ", "), "a, b, c");
  EXPECT_EQ(join(std::vector<std::string>{"only"}, ", "), "only");
  EXPECT_EQ(join(std::vector<std::string>{}, ", "), "");
}

TEST(Join, KeepsEmptyItems) { EXPECT_EQ(join(std::vector<std::string>{"", "a", ""}, ","), ",a,"); }

TEST(Join, TakesAnyRangeOfStrings) {
  EXPECT_EQ(join(std::set<std::string>{"b", "a"}, "/"), "a/b");
  EXPECT_EQ(join(std::array<const char*, 2>{"x", "y"}, ""), "xy");
  EXPECT_EQ(join(std::vector<std::string_view>{"p", "q"}, " "), "p q");
}

TEST(InvalidUtf8At, AcceptsUtf8AndFindsTheFirstBadByte) {
  EXPECT_EQ(invalid_utf8_at(""), std::string_view::npos);
  EXPECT_EQ(invalid_utf8_at("plain // ASCII"), std::string_view::npos);
  EXPECT_EQ(invalid_utf8_at("\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            std::string_view::npos);
  EXPECT_EQ(invalid_utf8_at("caf\xe9 au lait"), 3u);   // Latin-1 e-acute
  EXPECT_EQ(invalid_utf8_at("ab\xc0\xaf"), 2u);        // overlong '/'
  EXPECT_EQ(invalid_utf8_at("\xed\xa0\x80"), 0u);      // a surrogate
  EXPECT_EQ(invalid_utf8_at("\xf4\x90\x80\x80"), 0u);  // past U+10FFFF
  EXPECT_EQ(invalid_utf8_at("ok\xe2\x82"), 2u);        // cut at the end
  EXPECT_EQ(invalid_utf8_at("\x80"), 0u);              // a stray continuation byte
}

}  // namespace
}  // namespace kiln
