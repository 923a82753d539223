// LineSplitter and OutputTail: lines across chunks, the last unterminated line, refusal,
// lines that never end, and a tail that keeps the end.
#include "kiln/base/process_output.h"

#include <gmock/gmock.h>

namespace kiln {
namespace {

using ::testing::ElementsAre;

TEST(LineSplitter, HandsOnLinesAcrossChunksAndTheUnterminatedLast) {
  std::vector<std::string> lines;
  LineSplitter splitter(
      [&](std::string_view line) {
        lines.emplace_back(line);
        return true;
      },
      100);
  EXPECT_TRUE(splitter.feed("one\ntw"));
  EXPECT_TRUE(splitter.feed("o\r\n\nthree"));
  EXPECT_THAT(lines, ElementsAre("one", "two", ""));
  EXPECT_TRUE(splitter.feed({}));
  EXPECT_THAT(lines, ElementsAre("one", "two", "", "three"));
  EXPECT_FALSE(splitter.refused());
}

TEST(LineSplitter, StopsAtTheFirstRefusedLine) {
  std::vector<std::string> lines;
  LineSplitter splitter(
      [&](std::string_view line) {
        lines.emplace_back(line);
        return line != "bad";
      },
      100);
  EXPECT_FALSE(splitter.feed("good\nbad\nafter\n"));
  EXPECT_FALSE(splitter.feed("more\n"));
  EXPECT_THAT(lines, ElementsAre("good", "bad"));
  EXPECT_TRUE(splitter.refused());
  EXPECT_EQ(splitter.problem(), "");
}

TEST(LineSplitter, RefusesALineThatGrowsPastTheLimit) {
  LineSplitter splitter([](std::string_view) { return true; }, 8);
  EXPECT_TRUE(splitter.feed("12345678"));
  EXPECT_FALSE(splitter.feed("9"));
  EXPECT_EQ(splitter.problem(), "a stdout line longer than 8 bytes");

  LineSplitter whole([](std::string_view) { return true; }, 8);
  EXPECT_FALSE(whole.feed("123456789\n"));
  EXPECT_TRUE(whole.refused());
}

TEST(OutputTail, KeepsTheLastBytes) {
  OutputTail tail(4);
  tail.append("ab");
  EXPECT_EQ(tail.text(), "ab");
  for (int i = 0; i < 10; ++i) tail.append("0123456789");
  EXPECT_EQ(tail.text(), "6789");
}

}  // namespace
}  // namespace kiln
