// poison_pattern.h: two distinct non-canonical NaNs per float dtype; host fill and count.
#include "kiln/tasks/poison_pattern.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kiln/tasks/numeric_codec.h"

namespace kiln::tasks {
namespace {

TEST(PoisonPattern, FloatPatternsAreTwoDifferentNans) {
  for (kiln_dtype dtype : {KILN_F16, KILN_BF16, KILN_F32, KILN_F64, KILN_E4M3, KILN_E5M2}) {
    const uint64_t a = PoisonPattern::bits(dtype, 0);
    const uint64_t b = PoisonPattern::bits(dtype, 1);
    EXPECT_NE(a, b) << dtype;
    EXPECT_TRUE(std::isnan(decode(dtype, a))) << dtype;
    EXPECT_TRUE(std::isnan(decode(dtype, b))) << dtype;
  }
}

TEST(PoisonPattern, AvoidsTheNansArithmeticProduces) {
  // CUDA's canonical NaNs: a kernel that computes NaN must not look like "never written".
  EXPECT_NE(PoisonPattern::bits(KILN_F16, 0), 0x7fffu);
  EXPECT_NE(PoisonPattern::bits(KILN_F16, 1), 0x7fffu);
  EXPECT_NE(PoisonPattern::bits(KILN_F16, 0), 0x7e00u);
  EXPECT_NE(PoisonPattern::bits(KILN_BF16, 0), 0x7fffu);
  EXPECT_NE(PoisonPattern::bits(KILN_BF16, 0), 0x7fc0u);
  EXPECT_NE(PoisonPattern::bits(KILN_F32, 0), 0x7fffffffu);
  EXPECT_NE(PoisonPattern::bits(KILN_F32, 0), 0x7fc00000u);
}

TEST(PoisonPattern, AlternatesByCall) {
  EXPECT_EQ(PoisonPattern::for_call(KILN_F16, 0), PoisonPattern::bits(KILN_F16, 0));
  EXPECT_EQ(PoisonPattern::for_call(KILN_F16, 1), PoisonPattern::bits(KILN_F16, 1));
  EXPECT_EQ(PoisonPattern::for_call(KILN_F16, 2), PoisonPattern::bits(KILN_F16, 0));
}

TEST(PoisonPattern, CountsUnwrittenElements) {
  std::vector<uint16_t> data(100);
  const uint64_t pattern = PoisonPattern::bits(KILN_F16, 1);
  PoisonPattern::fill_host(data.data(), 100, KILN_F16, pattern);
  EXPECT_EQ(PoisonPattern::count_host(data.data(), 100, KILN_F16, pattern), 100);
  data[3] = 0x3c00;
  data[97] = 0x0000;
  EXPECT_EQ(PoisonPattern::count_host(data.data(), 100, KILN_F16, pattern), 98);
  EXPECT_EQ(PoisonPattern::count_host(data.data(), 100, KILN_F16, PoisonPattern::bits(KILN_F16, 0)),
            0);
}

}  // namespace
}  // namespace kiln::tasks
