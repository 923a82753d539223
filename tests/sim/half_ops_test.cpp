#include <gtest/gtest.h>

#include "sim_test_util.h"

namespace kiln::sim::testing {
namespace {

class HalfOpsTest : public SimTest {};

TEST_F(HalfOpsTest, ScalarF16ArithmeticRoundsToNearestEven) {
  // 1 + 2^-11 (the half-way point) rounds down to 1; 1 + 1.5*2^-10 rounds to 1 + 2^-9.
  EXPECT_EQ(eval("add.f16 %d, %a, %b", 16, 16, {0x3c00}, {0x1000})[0], 0x3c00u);  // 2^-11
  EXPECT_EQ(eval("add.f16 %d, %a, %b", 16, 16, {0x3c01}, {0x1000})[0], 0x3c02u);
  EXPECT_EQ(eval("mul.f16 %d, %a, %b", 16, 16, {0x4000}, {0x4200})[0], 0x4600u);  // 2 * 3 = 6
  EXPECT_EQ(eval("fma.rn.f16 %d, %a, %b, %c", 16, 16, {0x3c00}, {0x4000}, {0xbc00})[0], 0x3c00u);
  EXPECT_EQ(eval("add.f16 %d, %a, %b", 16, 16, {0x7bff}, {0x7bff})[0], 0x7c00u);  // overflow
}

TEST_F(HalfOpsTest, PackedF16x2WorksOnBothHalves) {
  // {hi, lo} = {2, 1} + {3, 4} = {5, 5}; fma with relu clamps the negative half to 0.
  EXPECT_EQ(eval("add.f16x2 %d, %a, %b", 32, 32, {0x40003c00}, {0x42004400})[0], 0x45004500u);
  EXPECT_EQ(
      eval("fma.rn.relu.f16x2 %d, %a, %b, %c", 32, 32, {0x3c003c00}, {0x3c00bc00}, {0x00000000})[0],
      0x3c000000u);
  EXPECT_EQ(eval("neg.f16x2 %d, %a", 32, 32, {0x3c00bc00})[0], 0xbc003c00u);
}

TEST_F(HalfOpsTest, Bf16Arithmetic) {
  // 1 + 2^-8 ties to even (1); 1.5 * 1.5 = 2.25.
  EXPECT_EQ(eval("add.bf16 %d, %a, %b", 16, 16, {0x3f80}, {0x3b80})[0], 0x3f80u);
  EXPECT_EQ(eval("mul.bf16 %d, %a, %b", 16, 16, {0x3fc0}, {0x3fc0})[0], 0x4010u);
  EXPECT_EQ(
      eval("fma.rn.bf16x2 %d, %a, %b, %c", 32, 32, {0x3fc03f80}, {0x40004000}, {0x3f803f80})[0],
      0x40803f80u + 0x00000000u + (0x4040u - 0x3f80u));
  EXPECT_EQ(eval("max.bf16 %d, %a, %b", 16, 16, {0xbf80}, {0x3f80})[0], 0x3f80u);
}

TEST_F(HalfOpsTest, HalfComparisons) {
  EXPECT_EQ(eval("setp.lt.f16 %p, %a, %b; selp.u32 %d, 1, 0, %p", 16, 32, {0xbc00, 0x3c00},
                 {0x3c00, 0xbc00}),
            (std::vector<uint64_t>{1, 0}));
  EXPECT_EQ(eval("setp.gt.f16x2 %p|%q, %a, %b; selp.u32 %d, 1, 0, %p; selp.u32 %t, 2, 0, %q; "
                 "add.u32 %d, %d, %t",
                 32, 32, {0x3c004000}, {0x40003c00})[0],
            1u);
}

}  // namespace
}  // namespace kiln::sim::testing
