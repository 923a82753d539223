#include "kiln/base/json_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace kiln {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::string nested_arrays(int levels) {
  return std::string(static_cast<size_t>(levels), '[') +
         std::string(static_cast<size_t>(levels), ']');
}

TEST(ParseJsonBounded, ParsesADocument) {
  auto value = parse_json_bounded(R"({"a": [1, {"b": "c"}], "d": null})");
  ASSERT_TRUE(value.ok()) << value.error().message;
  EXPECT_EQ((*value)["a"][1]["b"], "c");
}

TEST(ParseJsonBounded, AcceptsNestingUpToTheLimit) {
  EXPECT_TRUE(parse_json_bounded(nested_arrays(kMaxJsonDepth)).ok());
  EXPECT_TRUE(parse_json_bounded("{\"a\": " + nested_arrays(kMaxJsonDepth - 1) + "}").ok());
}

TEST(ParseJsonBounded, RefusesNestingBeyondTheLimit) {
  auto value = parse_json_bounded(nested_arrays(kMaxJsonDepth + 1));
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.error().message, "nests arrays and objects deeper than 128 levels");
  EXPECT_FALSE(parse_json_bounded("{\"a\": " + nested_arrays(kMaxJsonDepth) + "}").ok());
  EXPECT_FALSE(parse_json_bounded(nested_arrays(3), 2).ok());
}

// A few hundred KB of brackets overflowed the stack of whatever copied or printed the value.
TEST(ParseJsonBounded, RefusesAMillionLevelsQuicklyAndWithoutRecursion) {
  const auto start = std::chrono::steady_clock::now();
  auto value = parse_json_bounded(R"({"params": )" + nested_arrays(1'000'000) + "}");
  EXPECT_FALSE(value.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(ParseJsonBounded, ReportsSyntaxErrorsWithoutTheExceptionPrefix) {
  auto value = parse_json_bounded("{\"a\": ");
  ASSERT_FALSE(value.ok());
  EXPECT_THAT(value.error().message, StartsWith("is not valid JSON: parse error at line 1"));
  EXPECT_THAT(value.error().message, Not(HasSubstr("[json.exception")));
}

// nlohmann throws out_of_range, not parse_error, for a number beyond double.
TEST(ParseJsonBounded, ReportsNumberOverflowAsAnError) {
  auto value = parse_json_bounded(R"({"x": 1e400})");
  ASSERT_FALSE(value.ok());
  EXPECT_THAT(value.error().message, HasSubstr("number overflow"));
}

TEST(ParseJsonBounded, CutsTheMessageOfALongBadToken) {
  auto value = parse_json_bounded("\"" + std::string(100000, 'x') + "\x01\"");
  ASSERT_FALSE(value.ok());
  EXPECT_LT(value.error().message.size(), 300u);
}

TEST(JsonText, WritesCompactJson) {
  EXPECT_EQ(json_text(nlohmann::json{{"a", 1}, {"b", {true, nullptr}}}),
            R"({"a":1,"b":[true,null]})");
}

// dump() throws type_error 316 here; a reply must still go out.
TEST(JsonText, ReplacesBytesThatAreNotUtf8) {
  const nlohmann::json value = {{"error", std::string("Host h\xff\xfe is not allowed; caf\xc3")}};
  EXPECT_THROW((void)value.dump(), nlohmann::json::type_error);
  const std::string text = json_text(value);
  EXPECT_EQ(text, "{\"error\":\"Host h\xef\xbf\xbd\xef\xbf\xbd is not allowed; caf\xef\xbf\xbd\"}");
  EXPECT_TRUE(parse_json_bounded(text).ok());
}

}  // namespace
}  // namespace kiln
