// output_comparison.h: the tolerance rule, error statistics and their report.
#include "kiln/tasks/output_comparison.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kiln/tasks/element_check.h"
#include "kiln/tasks/numeric_codec.h"
#include "kiln/tasks/poison_pattern.h"
#include "kiln/tasks/tensor_layout.h"

namespace kiln::tasks {
namespace {

std::vector<float> values(std::initializer_list<float> list) { return std::vector<float>(list); }

TEST(ElementCheck, FollowsTheTaskRule) {
  EXPECT_TRUE(element_passes(1.005, 1.0, 0.01, 0.0));
  EXPECT_FALSE(element_passes(1.02, 1.0, 0.01, 0.0));
  EXPECT_TRUE(element_passes(102.0, 100.0, 0.0, 0.02));
  EXPECT_TRUE(element_passes(std::nan(""), std::nan(""), 0, 0));
  EXPECT_FALSE(element_passes(1.0, std::nan(""), 1, 1));
  EXPECT_FALSE(element_passes(std::nan(""), 1.0, 1, 1));
  EXPECT_TRUE(element_passes(INFINITY, INFINITY, 0, 0));
  EXPECT_FALSE(element_passes(-INFINITY, INFINITY, 0, 0));
  EXPECT_FALSE(element_passes(INFINITY, 1e30, 1, 1));
}

TEST(OutputComparison, CountsMismatchesAndReportsTheFirst) {
  const auto expected = values({1, 2, 3, 4, 5, 6});
  const auto actual = values({1, 2.5f, 3, 4, 5, 9});
  const ErrorStats s =
      compare_host(actual.data(), expected.data(), KILN_F32, 6, {2, 3}, {0.2, 0.0, 0}, 0);
  EXPECT_EQ(s.checked, 6);
  EXPECT_EQ(s.mismatches, 2);
  EXPECT_EQ(s.far, 0);  // 3.0 is within 16x the 0.2 tolerance
  EXPECT_DOUBLE_EQ(s.max_abs, 3.0);
  EXPECT_DOUBLE_EQ(s.max_rel, 0.5);
  ASSERT_EQ(s.first_mismatches.size(), 2u);
  EXPECT_EQ(s.first_mismatches[0].index, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(s.first_mismatches[1].index, (std::vector<int64_t>{1, 2}));
  EXPECT_FALSE(s.passes(0.0));
  EXPECT_TRUE(s.passes(0.5));
  EXPECT_NE(s.summary().find("2 of 6"), std::string::npos);
  EXPECT_NE(s.summary().find("[0, 1]"), std::string::npos);
}

TEST(OutputComparison, MapsSampledRowsBackToOutputRows) {
  const auto expected = values({1, 1, 1, 1});
  const auto actual = values({1, 1, 1, 7});
  const std::vector<int64_t> rows = {3, 900};
  const ErrorStats s =
      compare_host(actual.data(), expected.data(), KILN_F32, 4, {2, 2}, {0.1, 0, 0}, 0, &rows);
  ASSERT_EQ(s.first_mismatches.size(), 1u);
  EXPECT_EQ(s.first_mismatches[0].index, (std::vector<int64_t>{900, 1}));
}

TEST(OutputComparison, CountsNanInfAndUnwritten) {
  std::vector<uint16_t> expected(4, 0x3c00);  // 1.0
  const uint64_t poison = PoisonPattern::bits(KILN_F16, 0);
  std::vector<uint16_t> actual = {0x3c00, static_cast<uint16_t>(poison), 0x7c00, 0x7fff};
  const ErrorStats s =
      compare_host(actual.data(), expected.data(), KILN_F16, 4, {4}, {0.01, 0.01, 0}, poison);
  EXPECT_EQ(s.mismatches, 3);
  EXPECT_EQ(s.poisoned, 1);
  EXPECT_EQ(s.nan, 2);
  EXPECT_EQ(s.inf, 1);
  EXPECT_TRUE(std::isfinite(s.max_abs));  // only finite pairs count
  EXPECT_NE(s.summary().find("never written"), std::string::npos);
}

// max_mismatch_fraction forgives near misses: a few elements a little outside the tolerance.
// One element beyond kNearMissFactor times it (or NaN) fails whatever the fraction.
TEST(OutputComparison, TheMismatchFractionForgivesNearMissesOnly) {
  Tolerance tolerance;
  tolerance.atol = 0.01;
  tolerance.max_mismatch_fraction = 0.5;
  std::vector<float> expected = {1, 1, 1, 1};
  std::vector<float> near = {1.05f, 1, 1, 1};  // 5x the tolerance
  ErrorStats s = compare_host(near.data(), expected.data(), KILN_F32, 4, {4}, tolerance, 0);
  EXPECT_EQ(s.mismatches, 1);
  EXPECT_EQ(s.far, 0);
  EXPECT_TRUE(s.passes(0.5));
  EXPECT_FALSE(s.passes(0));
  std::vector<float> far = {1.2f, 1, 1, 1};  // 20x
  s = compare_host(far.data(), expected.data(), KILN_F32, 4, {4}, tolerance, 0);
  EXPECT_EQ(s.far, 1);
  EXPECT_FALSE(s.passes(0.5));
  EXPECT_NE(s.summary().find("no max_mismatch_fraction forgives"), std::string::npos);
  std::vector<float> nan = {std::nanf(""), 1, 1, 1};
  s = compare_host(nan.data(), expected.data(), KILN_F32, 4, {4}, tolerance, 0);
  EXPECT_FALSE(s.passes(0.5));
  EXPECT_EQ(s.to_json()["far_mismatches"], 1);
}

// Rows flagged kRowUntouched must keep the poison bit for bit; any other value there is a far
// mismatch, whatever the reference holds and whatever the mismatch fraction.
TEST(OutputComparison, UntouchedRowsMustKeepThePoison) {
  const uint32_t poison = 0x7fc0dead;
  float poisoned = 0;
  std::memcpy(&poisoned, &poison, 4);
  const std::vector<float> expected = {1, 2, 0, 0, 5, 6};
  std::vector<float> actual = {1, 2, poisoned, poisoned, 5, 6};
  const std::vector<uint8_t> rows = {0, kRowUntouched, 0};
  ErrorStats s = compare_host(actual.data(), expected.data(), KILN_F32, 6, {3, 2}, {0.0, 0.0, 0},
                              poison, nullptr, &rows);
  EXPECT_EQ(s.mismatches, 0);
  EXPECT_EQ(s.poisoned, 0) << "the untouched row's poison is not 'never written'";
  EXPECT_TRUE(s.passes(0.0));
  actual[3] = 0;  // what the reference holds there, yet the op must not write it
  s = compare_host(actual.data(), expected.data(), KILN_F32, 6, {3, 2}, {0.0, 0.0, 0}, poison,
                   nullptr, &rows);
  EXPECT_EQ(s.mismatches, 1);
  EXPECT_EQ(s.stray, 1);
  EXPECT_EQ(s.far, 1);
  EXPECT_FALSE(s.passes(0.5));
  ASSERT_FALSE(s.first_mismatches.empty());
  EXPECT_EQ(s.first_mismatches[0].index, (std::vector<int64_t>{1, 1}));
  EXPECT_NE(s.summary().find("rows the op must leave untouched"), std::string::npos);
  EXPECT_EQ(s.to_json()["written_outside_rows"], 1);
}

TEST(OutputComparison, MergeAddsCountsAndKeepsMaxima) {
  ErrorStats a;
  a.checked = 10;
  a.mismatches = 1;
  a.far = 1;
  a.max_abs = 0.5;
  ErrorStats b;
  b.checked = 5;
  b.max_abs = 2;
  b.max_rel = 0.1;
  a.merge(b);
  EXPECT_EQ(a.checked, 15);
  EXPECT_EQ(a.mismatches, 1);
  EXPECT_EQ(a.far, 1);
  EXPECT_EQ(a.max_abs, 2);
  EXPECT_EQ(a.max_rel, 0.1);
}

TEST(OutputComparison, JsonKeepsNanOutOfNumbers) {
  ErrorStats s;
  s.checked = 1;
  s.mismatches = 1;
  s.first_mismatches.push_back({{0}, 1.0, std::nan("")});
  const nlohmann::json j = s.to_json();
  EXPECT_EQ(j["first_mismatches"][0]["actual"], "nan");
  EXPECT_EQ(j["mismatches"], 1);
  EXPECT_TRUE(j["max_abs"].is_number());
}

TEST(OutputComparison, BitwiseDifferences) {
  std::vector<uint16_t> a = {1, 2, 3}, b = {1, 5, 3};
  EXPECT_EQ(count_bitwise_differences(a.data(), b.data(), KILN_BF16, 3), 1);
}

}  // namespace
}  // namespace kiln::tasks
