// Checks the output comparison (tests/zoo/support/output_compare.cpp).
#include "output_compare.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "reference_test_util.h"

namespace kiln::zoo {
namespace {

using testing::tensor;

TEST(OutputCompare, PassesWithinAtolPlusRtolTimesReference) {
  HostTensor expected = tensor("C", KILN_F32, {1, 3}, {1, 100, 0});
  HostTensor actual = tensor("C", KILN_F32, {1, 3}, {1.01, 100.5, -0.01});
  const Comparison c = compare_outputs(expected, actual, 0.01, 0.005);
  EXPECT_TRUE(c.passed()) << c.describe(0.01, 0.005);
  EXPECT_EQ(c.checked, 3);
  EXPECT_NEAR(c.max_abs_error, 0.5, 1e-9);
  EXPECT_NEAR(c.max_rel_error, 0.01, 1e-6);
}

TEST(OutputCompare, ReportsMismatchesWithIndicesExpectedAndActual) {
  HostTensor expected = tensor("C", KILN_F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor actual = tensor("C", KILN_F32, {2, 3}, {1, 2, 3.5, 4, 5, 7});
  const Comparison c = compare_outputs(expected, actual, 0.01, 0);
  EXPECT_EQ(c.mismatches, 2);
  ASSERT_EQ(c.first.size(), 2u);
  EXPECT_EQ(c.first[0].index, 2);
  EXPECT_EQ(c.first[0].expected, 3);
  EXPECT_EQ(c.first[0].actual, 3.5);
  EXPECT_EQ(c.max_abs_index, 5);
  const std::string text = c.describe(0.01, 0);
  EXPECT_NE(text.find("2 of 6"), std::string::npos) << text;
  EXPECT_NE(text.find("C[0, 2] expected 3 got 3.5"), std::string::npos) << text;
  EXPECT_NE(text.find("max abs error 1 at C[1, 2]"), std::string::npos) << text;
}

TEST(OutputCompare, NaNOrInfWhereTheReferenceIsFiniteAlwaysFails) {
  HostTensor expected = tensor("y", KILN_F32, {3}, {1, 2, 3});
  HostTensor actual = tensor("y", KILN_F32, {3}, {1, std::nan(""), INFINITY});
  const Comparison c = compare_outputs(expected, actual, 1e30, 1e30);
  EXPECT_EQ(c.mismatches, 2);
  EXPECT_EQ(c.unexpected_nonfinite, 2);
  EXPECT_NE(c.describe(1e30, 1e30).find("NaN/Inf"), std::string::npos);
}

TEST(OutputCompare, NaNAndInfInTheReferenceMustBeMatched) {
  HostTensor expected = tensor("y", KILN_F32, {3}, {std::nan(""), INFINITY, -INFINITY});
  HostTensor same = tensor("y", KILN_F32, {3}, {std::nan(""), INFINITY, -INFINITY});
  HostTensor other = tensor("y", KILN_F32, {3}, {0, -INFINITY, -INFINITY});
  EXPECT_TRUE(compare_outputs(expected, same, 0, 0).passed());
  EXPECT_EQ(compare_outputs(expected, other, 1, 1).mismatches, 2);
}

TEST(OutputCompare, IntegersMustBeExact) {
  HostTensor expected = tensor("indices", KILN_I32, {3}, {1, 2, 3});
  HostTensor actual = tensor("indices", KILN_I32, {3}, {1, 2, 4});
  const Comparison c = compare_outputs(expected, actual, 10, 10);
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_EQ(c.max_abs_error, 1);
}

TEST(OutputCompare, ChecksOnlySampledRows) {
  HostTensor expected = tensor("C", KILN_F32, {3, 2}, {1, 2, 0, 0, 5, 6});
  HostTensor actual = tensor("C", KILN_F32, {3, 2}, {1, 2, 9, 9, 5, 6});
  const Comparison c = compare_outputs(expected, actual, 0, 0, std::vector<int64_t>{0, 2}, 2);
  EXPECT_TRUE(c.passed());
  EXPECT_EQ(c.checked, 4);
}

TEST(OutputCompare, LimitsTheReportedMismatchesToTheFirstOnes) {
  HostTensor expected = make_host_tensor("y", KILN_F32, {300000});
  HostTensor actual = testing::filled("y", KILN_F32, {300000}, 1);
  const Comparison c = compare_outputs(expected, actual, 0, 0, {}, 0, 5);
  EXPECT_EQ(c.mismatches, 300000);
  ASSERT_EQ(c.first.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(c.first[static_cast<size_t>(i)].index, i);
}

TEST(OutputCompare, FindsNonFiniteElementsAnywhere) {
  HostTensor t = tensor("C", KILN_BF16, {2, 3}, {1, 2, 3, 4, INFINITY, std::nan("")});
  const NonFinite found = find_nonfinite(t);
  EXPECT_EQ(found.count, 2);
  EXPECT_EQ(found.first, 4);
  EXPECT_EQ(find_nonfinite(tensor("i", KILN_I32, {2}, {1, 2})).count, 0);
}

TEST(OutputCompare, FindsElementsChangedOutsideTheWrittenRows) {
  // Rows of 2 elements; rows 1 and 3 were written, rows 0 and 2 must still hold 0xff bytes.
  HostTensor t = tensor("cache", KILN_BF16, {4, 2});
  std::fill(t.bytes.begin(), t.bytes.end(), static_cast<unsigned char>(0xff));
  encode_element(KILN_BF16, t.bytes.data(), 2, 1.5);  // row 1: written, not counted
  EXPECT_EQ(find_changed_outside_rows(t, {3, 1}, 2, 0xff).count, 0);
  t.bytes[2 * 4 + 1] = 0x7f;  // the upper byte of element 4 (row 2)
  const ChangedOutside found = find_changed_outside_rows(t, {3, 1}, 2, 0xff);
  EXPECT_EQ(found.count, 1);
  EXPECT_EQ(found.first, 4);
  EXPECT_EQ(find_changed_outside_rows(t, {1, 2, 3}, 2, 0xff).count, 0);
}

}  // namespace
}  // namespace kiln::zoo
