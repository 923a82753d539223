#include "half.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kiln::sim {
namespace {

TEST(Half, DecodesNormalsSubnormalsAndSpecials) {
  EXPECT_EQ(small_to_double(0x3c00, kF16), 1.0);
  EXPECT_EQ(small_to_double(0xc000, kF16), -2.0);
  EXPECT_EQ(small_to_double(0x0001, kF16), std::ldexp(1.0, -24));
  EXPECT_EQ(small_to_double(0x7bff, kF16), 65504.0);
  EXPECT_TRUE(std::isinf(small_to_double(0x7c00, kF16)));
  EXPECT_TRUE(std::isnan(small_to_double(0x7e00, kF16)));
  EXPECT_EQ(small_to_double(0x3f80, kBF16), 1.0);
  EXPECT_EQ(small_to_double(0x7e, kE4M3), 448.0);
  EXPECT_TRUE(std::isnan(small_to_double(0x7f, kE4M3)));
  EXPECT_EQ(small_to_double(0x7b, kE5M2), 57344.0);
  EXPECT_EQ(small_to_double(0x01, kE4M3), std::ldexp(1.0, -9));
}

TEST(Half, RoundsToNearestEvenAndInEveryDirection) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10 in f16.
  double half_way = 1.0 + std::ldexp(1.0, -11);
  EXPECT_EQ(double_to_small(half_way, kF16, 0, false), 0x3c00u);
  EXPECT_EQ(double_to_small(half_way, kF16, 3, false), 0x3c01u);
  EXPECT_EQ(double_to_small(-half_way, kF16, 2, false), 0xbc01u);
  EXPECT_EQ(double_to_small(-half_way, kF16, 1, false), 0xbc00u);
  EXPECT_EQ(double_to_small(1.0 + 3 * std::ldexp(1.0, -11), kF16, 0, false), 0x3c02u);
  EXPECT_EQ(double_to_small(std::ldexp(1.0, -25) * 3, kF16, 0, false), 0x0002u);  // subnormal
}

TEST(Half, OverflowGoesToInfinityOrSaturates) {
  EXPECT_EQ(double_to_small(70000.0, kF16, 0, false), 0x7c00u);
  EXPECT_EQ(double_to_small(70000.0, kF16, 1, false), 0x7bffu);
  EXPECT_EQ(double_to_small(70000.0, kF16, 0, true), 0x7bffu);
  EXPECT_EQ(double_to_small(1000.0, kE4M3, 0, true), 0x7eu);
  EXPECT_EQ(double_to_small(-1e6, kE5M2, 0, true), 0xfbu);
  EXPECT_EQ(double_to_small(INFINITY, kE5M2, 0, true), 0x7bu);
  EXPECT_EQ(double_to_small(NAN, kE4M3, 0, true), 0x7fu);
}

TEST(Half, Fp8RoundsToNearestEven) {
  // e4m3 near 1: spacing 1/8; 1 + 1/16 ties to 1, 1 + 3/16 ties to 1.25.
  EXPECT_EQ(double_to_small(1.0625, kE4M3, 0, true), 0x38u);
  EXPECT_EQ(double_to_small(1.1875, kE4M3, 0, true), 0x3au);
  EXPECT_EQ(double_to_small(1.5, kE5M2, 0, true), 0x3eu);
}

}  // namespace
}  // namespace kiln::sim
