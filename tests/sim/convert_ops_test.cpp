#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "sim_test_util.h"

namespace kiln::sim::testing {
namespace {

class ConvertOpsTest : public SimTest {};

uint64_t f(float v) { return std::bit_cast<uint32_t>(v); }
uint64_t d(double v) { return std::bit_cast<uint64_t>(v); }

TEST_F(ConvertOpsTest, IntegerWideningAndNarrowing) {
  EXPECT_EQ(eval("cvt.s64.s32 %d, %a", 32, 64, {0xfffffffeu})[0], static_cast<uint64_t>(-2));
  EXPECT_EQ(eval("cvt.u64.u32 %d, %a", 32, 64, {0xfffffffeu})[0], 0xfffffffeull);
  EXPECT_EQ(eval("cvt.u16.u32 %d, %a", 32, 16, {0x12345})[0], 0x2345u);
  EXPECT_EQ(eval("cvt.sat.u8.s32 %d, %a", 32, 32, {0xffffffffu, 300, 7}),
            (std::vector<uint64_t>{0, 255, 7}));
  EXPECT_EQ(eval("cvt.sat.s16.s32 %d, %a", 32, 16, {0x7fffffff, 0x80000000u}),
            (std::vector<uint64_t>{0x7fff, 0x8000}));
  EXPECT_EQ(eval("cvt.s32.s8 %d, %a", 32, 32, {0x80})[0], 0xffffff80u);
}

TEST_F(ConvertOpsTest, FloatToIntegerRoundsSaturatesAndZeroesNaN) {
  EXPECT_EQ(eval("cvt.rzi.s32.f32 %d, %a", 32, 32, {f(-2.7f), f(2.7f)}),
            (std::vector<uint64_t>{0xfffffffeu, 2}));
  EXPECT_EQ(eval("cvt.rni.s32.f32 %d, %a", 32, 32, {f(2.5f), f(3.5f), f(-2.5f)}),
            (std::vector<uint64_t>{2, 4, 0xfffffffeu}));
  EXPECT_EQ(eval("cvt.rmi.s32.f32 %d, %a", 32, 32, {f(-2.1f)})[0], 0xfffffffdu);
  EXPECT_EQ(eval("cvt.rpi.u32.f32 %d, %a", 32, 32, {f(2.1f)})[0], 3u);
  EXPECT_EQ(eval("cvt.rzi.s32.f32 %d, %a", 32, 32, {f(3e9f), f(-3e9f), 0x7fc00000u}),
            (std::vector<uint64_t>{0x7fffffffu, 0x80000000u, 0}));
  EXPECT_EQ(eval("cvt.rzi.u32.f32 %d, %a", 32, 32, {f(-5.0f)})[0], 0u);
  EXPECT_EQ(eval("cvt.rzi.s64.f64 %d, %a", 64, 64, {d(-1e30)})[0], 0x8000000000000000ull);
}

TEST_F(ConvertOpsTest, IntegerToFloatHonoursRounding) {
  // 2^24 + 1 is not a float: rn -> 2^24 (even), rp -> 2^24 + 2.
  EXPECT_EQ(eval("cvt.rn.f32.u32 %d, %a", 32, 32, {16777217})[0], f(16777216.0f));
  EXPECT_EQ(eval("cvt.rp.f32.u32 %d, %a", 32, 32, {16777217})[0], f(16777218.0f));
  EXPECT_EQ(eval("cvt.rn.f32.s64 %d, %a", 64, 32, {static_cast<uint64_t>(-3)})[0], f(-3.0f));
  EXPECT_EQ(eval("cvt.rn.f64.s32 %d, %a", 32, 64, {0xffffffffu})[0], d(-1.0));
}

TEST_F(ConvertOpsTest, FloatToFloatRoundsAndSaturates) {
  // 1 + 2^-30 as a double rounds to 1.0f, or up with .rp.
  uint64_t x = d(1.0 + std::ldexp(1.0, -30));
  EXPECT_EQ(eval("cvt.rn.f32.f64 %d, %a", 64, 32, {x})[0], f(1.0f));
  EXPECT_EQ(eval("cvt.rp.f32.f64 %d, %a", 64, 32, {x})[0], 0x3f800001u);
  EXPECT_EQ(eval("cvt.f64.f32 %d, %a", 32, 64, {f(0.1f)})[0], d(static_cast<double>(0.1f)));
  EXPECT_EQ(eval("cvt.sat.f32.f32 %d, %a", 32, 32, {f(1.5f), f(-1.0f), f(0.25f)}),
            (std::vector<uint64_t>{f(1.0f), 0, f(0.25f)}));
  EXPECT_EQ(eval("cvt.rni.f32.f32 %d, %a", 32, 32, {f(2.5f), f(-0.7f)}),
            (std::vector<uint64_t>{f(2.0f), f(-1.0f)}));
}

TEST_F(ConvertOpsTest, HalfConversions) {
  EXPECT_EQ(eval("cvt.f32.f16 %d, %a", 16, 32, {0x3555})[0], f(0.333251953125f));
  EXPECT_EQ(eval("cvt.rn.f16.f32 %d, %a", 32, 16, {f(1.0f / 3.0f)})[0], 0x3555u);
  EXPECT_EQ(eval("cvt.rz.f16.f32 %d, %a", 32, 16, {f(65520.0f)})[0], 0x7bffu);
  EXPECT_EQ(eval("cvt.rn.f16.f32 %d, %a", 32, 16, {f(65520.0f)})[0], 0x7c00u);
  EXPECT_EQ(eval("cvt.rn.bf16.f32 %d, %a", 32, 16, {0x3f808000u, 0x3f818000u}),
            (std::vector<uint64_t>{0x3f80u, 0x3f82u}));
  EXPECT_EQ(eval("cvt.f32.bf16 %d, %a", 16, 32, {0xc040})[0], f(-3.0f));
  // cvt.rn.f16x2.f32 d, a, b: a goes to the upper half.
  EXPECT_EQ(eval("cvt.rn.f16x2.f32 %d, %a, %b", 32, 32, {f(2.0f)}, {f(1.0f)})[0], 0x40003c00u);
  EXPECT_EQ(eval("cvt.rn.bf16x2.f32 %d, %a, %b", 32, 32, {f(-1.0f)}, {f(3.0f)})[0], 0xbf804040u);
}

TEST_F(ConvertOpsTest, Tf32RoundsToNearestWithTiesAwayFromZero) {
  // tf32 keeps 10 mantissa bits; 1 + 2^-11 is a tie: rna rounds away (up), rn would not.
  EXPECT_EQ(eval("cvt.rna.tf32.f32 %d, %a", 32, 32, {0x3f801000u, 0xbf801000u}),
            (std::vector<uint64_t>{0x3f802000u, 0xbf802000u}));
  EXPECT_EQ(eval("cvt.rna.tf32.f32 %d, %a", 32, 32, {0x3f800fffu})[0], 0x3f800000u);
}

TEST_F(ConvertOpsTest, Fp8ConversionsSaturateToFinite) {
  // cvt.rn.satfinite.e4m3x2.f32 d, a, b: a in the upper byte.
  EXPECT_EQ(eval("cvt.rn.satfinite.e4m3x2.f32 %d, %a, %b", 32, 16, {f(1.0f)}, {f(1000.0f)})[0],
            0x387eu);
  EXPECT_EQ(eval("cvt.rn.satfinite.e5m2x2.f32 %d, %a, %b", 32, 16, {f(-2.0f)}, {f(1e9f)})[0],
            0xc07bu);
  EXPECT_EQ(eval("cvt.rn.satfinite.relu.e4m3x2.f32 %d, %a, %b", 32, 16, {f(-1.0f)}, {f(0.5f)})[0],
            0x0030u);
  // Back to f16x2: 0x38 (1.0) -> 0x3c00, 0x7e (448) -> 0x5f00.
  EXPECT_EQ(eval("cvt.rn.f16x2.e4m3x2 %d, %a", 16, 32, {0x387e})[0], 0x3c005f00u);
  EXPECT_EQ(eval("cvt.rn.f16x2.e5m2x2 %d, %a", 16, 32, {0x3c40})[0], 0x3c004000u);
}

}  // namespace
}  // namespace kiln::sim::testing
