// JsonField: typed reads of JSON fields whose errors name the field and point at the format.
#include "kiln/base/json_field.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kiln {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

constexpr std::string_view kGuide = "docs/FORMAT.md";

// The error a read throws, as "FIELD: MESSAGE".
template <typename Read>
std::string error_of(Read read) {
  try {
    read();
  } catch (const JsonFieldError& e) {
    return e.text();
  }
  ADD_FAILURE() << "the read did not fail";
  return "";
}

TEST(JsonField, NamesTheFieldItFollowed) {
  const json document = json::parse(R"({"workloads": [{"K": 1}, {"K": "x"}]})");
  const JsonField root(document, "", kGuide);
  const auto rows = root.at("workloads").elements();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].at("K").path(), "workloads[1].K");
  EXPECT_EQ(rows[0].at("K").positive_integer(), 1);
  EXPECT_EQ(error_of([&] { rows[1].at("K").positive_integer(); }),
            "workloads[1].K: must be a positive integer, got \"x\"; write a whole number >= 1");
}

TEST(JsonField, TypeErrorsSayWhatCameAndWhereTheFormatIs) {
  const json document = {{"title", 7}, {"dims", "M"}};
  const JsonField root(document, "", kGuide);
  EXPECT_EQ(error_of([&] { root.at("title").string(); }),
            "title: must be a string, got an integer; docs/FORMAT.md gives each field's type");
  EXPECT_EQ(error_of([&] { root.at("dims").elements(); }),
            "dims: must be an array, got a string; docs/FORMAT.md gives each field's type");
  EXPECT_THAT(error_of([&] { root.at("title").object(); }), HasSubstr("must be an object"));
  EXPECT_EQ(error_of([&] { root.at("bytes"); }), "bytes: is missing; add it (see docs/FORMAT.md)");
  EXPECT_FALSE(root.find("bytes").has_value());
}

TEST(JsonField, AllowOnlyNamesTheStrayFieldAndTheKnownOnes) {
  const json document = {{"workload", 1}};
  const JsonField root(document, "job", kGuide);
  EXPECT_EQ(error_of([&] {
              root.allow_only({"workloads", "limits"});
            }),
            "job.workload: is not a known field; remove it or use one of: workloads, limits");
}

TEST(JsonField, IntegersWithinBounds) {
  const json document = {{"a", 5}, {"b", 0}, {"c", 2.5}, {"d", 18446744073709551615ull}};
  const JsonField root(document, "", kGuide);
  EXPECT_EQ(root.at("a").integer_between(1, 10), 5);
  EXPECT_EQ(error_of([&] { root.at("b").integer_between(1, 10); }),
            "b: must be an integer between 1 and 10, got 0");
  EXPECT_THAT(error_of([&] { root.at("c").integer_between(1, 10); }), HasSubstr("got 2.5"));
  EXPECT_THAT(error_of([&] { root.at("d").integer_between(1, 10); }), HasSubstr("between"));
  EXPECT_EQ(root.at("d").unsigned_integer(), 18446744073709551615ull);
  EXPECT_THAT(error_of([&] { root.at("c").unsigned_integer(); }), HasSubstr("whole number"));
}

TEST(JsonField, NumbersAboveALowBoundUpToAHighOne) {
  const json document = {{"zero", 0}, {"one", 1}, {"big", 2.5}, {"text", "1"}};
  const JsonField root(document, "limits", kGuide);
  EXPECT_EQ(root.at("one").number_above(0, 1), 1);
  EXPECT_EQ(error_of([&] { root.at("zero").number_above(0, 1); }),
            "limits.zero: must be greater than 0 and at most 1, got 0");
  EXPECT_THAT(error_of([&] { root.at("big").number_above(0, 1); }), HasSubstr("at most 1"));
  EXPECT_THAT(error_of([&] { root.at("text").number(); }), HasSubstr("must be a number"));
  EXPECT_EQ(root.at("big").nonnegative_number(), 2.5);
}

TEST(JsonField, DistinctStringListsRefuseRepeatsBlanksAndLength) {
  const json document = {{"twice", {"a", "b", "a"}},
                         {"blank", {"a", " "}},
                         {"long", {"a", "b", "c"}},
                         {"fine", {"a", "b"}}};
  const JsonField root(document, "", kGuide);
  EXPECT_EQ(root.at("fine").distinct_string_list(2), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(error_of([&] { root.at("twice").distinct_string_list(); }),
            "twice[2]: 'a' is listed twice; list each once");
  EXPECT_EQ(error_of([&] { root.at("blank").distinct_string_list(); }),
            "blank[1]: must not be empty; write a value");
  EXPECT_EQ(error_of([&] { root.at("long").distinct_string_list(2); }),
            "long: has 3 entries; list at most 2");
  EXPECT_EQ(root.at("twice").string_list().size(), 3u);
}

TEST(JsonField, Identifiers) {
  EXPECT_TRUE(is_identifier("_a1"));
  EXPECT_FALSE(is_identifier("1a"));
  EXPECT_FALSE(is_identifier(""));
  const json document = {{"symbol", "cudaMalloc!"}};
  const JsonField root(document, "", kGuide);
  EXPECT_THAT(error_of([&] { root.at("symbol").identifier(); }),
              HasSubstr("symbol: must be an identifier"));
}

// A long value is cut for the message; the cut never splits a character (the reply is JSON).
TEST(JsonField, CutsAQuotedValueAtACharacterBoundary) {
  std::string accents;
  for (int i = 0; i < 20; ++i) accents += "\u00e9";  // 2 bytes each
  const json document = {{"n", "a" + accents}};      // dumped: '"a' then the accents
  const JsonField root(document, "", kGuide);
  const std::string message = error_of([&] { root.at("n").positive_integer(); });
  // 37 bytes would end inside the 18th accent; the cut keeps 17.
  EXPECT_THAT(message, HasSubstr("got \"a" + accents.substr(0, 34) + "...; write"));
  EXPECT_NO_THROW((void)json(message).dump());
}

TEST(JsonField, AWholeDocumentErrorHasNoFieldPrefix) {
  EXPECT_EQ((JsonFieldError{"", "must be an object"}).text(), "must be an object");
  EXPECT_EQ((JsonFieldError{"kind", "is missing"}).text(), "kind: is missing");
}

}  // namespace
}  // namespace kiln
