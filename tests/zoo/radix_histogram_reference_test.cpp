// Checks the radix_histogram reference (kb/zoo/references/src/radix_histogram.cpp): digits of
// the unsigned bit pattern at a shift, and its argument checks.
#include <gtest/gtest.h>

#include "reference_test_util.h"

namespace kiln::zoo {
namespace {

using testing::call;
using testing::i64;
using testing::tensor;

TEST(RadixHistogramReference, CountsTheDigitAtTheShiftOfTheUnsignedPattern) {
  // -1 is 0xffffffff: digit 255 at every shift. 0x1234 has digit 0x12 at shift 8.
  HostTensor keys = tensor("keys", KILN_I32, {4}, {-1, 0x1234, 0x1200, 7});
  HostTensor counts = tensor("counts", KILN_I32, {256});
  ASSERT_EQ(call("radix_histogram", {&keys, &counts}, {i64("shift", 8)}), KILN_OK);
  EXPECT_EQ(counts.at(255), 1);
  EXPECT_EQ(counts.at(0x12), 2);
  EXPECT_EQ(counts.at(0), 1);
  double total = 0;
  for (int64_t d = 0; d < 256; ++d) total += counts.at(d);
  EXPECT_EQ(total, 4);
  ASSERT_EQ(call("radix_histogram", {&keys, &counts}, {i64("shift", 24)}), KILN_OK);
  EXPECT_EQ(counts.at(255), 1);
  EXPECT_EQ(counts.at(0), 3);
}

TEST(RadixHistogramReference, RejectsAShiftPastTheLastDigitAndAWrongCountsLength) {
  HostTensor keys = tensor("keys", KILN_I32, {2}, {1, 2});
  HostTensor counts = tensor("counts", KILN_I32, {256});
  EXPECT_EQ(call("radix_histogram", {&keys, &counts}, {i64("shift", 25)}), KILN_ERR_BAD_ARGUMENT);
  HostTensor short_counts = tensor("counts", KILN_I32, {16});
  EXPECT_EQ(call("radix_histogram", {&keys, &short_counts}, {i64("shift", 0)}),
            KILN_ERR_BAD_ARGUMENT);
}

}  // namespace
}  // namespace kiln::zoo
