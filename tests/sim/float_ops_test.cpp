#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>

#include "sim_test_util.h"

namespace kiln::sim::testing {
namespace {

class FloatOpsTest : public SimTest {};

uint64_t f(float v) { return std::bit_cast<uint32_t>(v); }
uint64_t d(double v) { return std::bit_cast<uint64_t>(v); }
float as_f(uint64_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits)); }

constexpr uint64_t kOne = 0x3f800000, kTiny = 0x33800000;  // 1.0f, 2^-24

TEST_F(FloatOpsTest, AddHonoursEveryRoundingMode) {
  // 1 + 2^-24 lies exactly halfway between 1 and 1 + 2^-23.
  EXPECT_EQ(eval("add.rn.f32 %d, %a, %b", 32, 32, {kOne}, {kTiny})[0], 0x3f800000u);
  EXPECT_EQ(eval("add.rp.f32 %d, %a, %b", 32, 32, {kOne}, {kTiny})[0], 0x3f800001u);
  EXPECT_EQ(eval("add.rz.f32 %d, %a, %b", 32, 32, {kOne}, {kTiny})[0], 0x3f800000u);
  EXPECT_EQ(eval("add.rm.f32 %d, %a, %b", 32, 32, {0xbf800000u}, {0xb3800000u})[0], 0xbf800001u);
  EXPECT_EQ(eval("sub.rz.f32 %d, %a, %b", 32, 32, {0xbf800000u}, {kTiny})[0], 0xbf800000u);
}

TEST_F(FloatOpsTest, DivisionAndSqrtAreCorrectlyRounded) {
  EXPECT_EQ(eval("div.rn.f32 %d, %a, %b", 32, 32, {kOne}, {f(3)})[0], 0x3eaaaaabu);
  EXPECT_EQ(eval("div.rz.f32 %d, %a, %b", 32, 32, {kOne}, {f(3)})[0], 0x3eaaaaaau);
  EXPECT_EQ(eval("sqrt.rn.f32 %d, %a", 32, 32, {f(2)})[0], 0x3fb504f3u);
  EXPECT_EQ(eval("rcp.rn.f32 %d, %a", 32, 32, {f(4)})[0], f(0.25f));
  EXPECT_EQ(eval("div.rn.f64 %d, %a, %b", 64, 64, {d(1)}, {d(3)})[0], 0x3fd5555555555555ull);
  EXPECT_EQ(eval("div.rp.f64 %d, %a, %b", 64, 64, {d(1)}, {d(3)})[0], 0x3fd5555555555556ull);
  EXPECT_EQ(eval("add.rn.f64 %d, %a, %b", 64, 64, {d(0.1)}, {d(0.2)})[0], 0x3fd3333333333334ull);
}

TEST_F(FloatOpsTest, FmaRoundsOnceButMulThenAddRoundsTwice) {
  uint64_t a = 0x3f800800;  // 1 + 2^-12
  EXPECT_EQ(eval("fma.rn.f32 %d, %a, %b, %c", 32, 32, {a}, {a}, {f(-1)})[0], 0x3a000400u);
  EXPECT_EQ(eval("mul.rn.f32 %d, %a, %b; add.rn.f32 %d, %d, %c", 32, 32, {a}, {a}, {f(-1)})[0],
            0x3a000000u);
}

TEST_F(FloatOpsTest, FtzAndSatModifiers) {
  EXPECT_EQ(eval("add.ftz.f32 %d, %a, %b", 32, 32, {1}, {0})[0], 0u);
  EXPECT_EQ(eval("add.f32 %d, %a, %b", 32, 32, {1}, {0})[0], 1u);
  EXPECT_EQ(eval("mul.sat.f32 %d, %a, %b", 32, 32, {f(2), f(-2), 0x7fc00000u}, {f(2), f(2), f(1)}),
            (std::vector<uint64_t>{kOne, 0, 0}));
}

TEST_F(FloatOpsTest, MinMaxPreferNumbersOverNaN) {
  uint64_t nan = 0x7fc00000;
  EXPECT_EQ(eval("min.f32 %d, %a, %b", 32, 32, {nan, f(2)}, {f(1), f(-3)}),
            (std::vector<uint64_t>{f(1), f(-3)}));
  EXPECT_EQ(eval("max.f32 %d, %a, %b", 32, 32, {f(-0.0f)}, {f(0.0f)})[0], f(0.0f));
  EXPECT_TRUE(std::isnan(as_f(eval("max.NaN.f32 %d, %a, %b", 32, 32, {nan}, {f(1)})[0])));
  EXPECT_EQ(eval("abs.f32 %d, %a", 32, 32, {f(-2.5f)})[0], f(2.5f));
  EXPECT_EQ(eval("neg.f64 %d, %a", 64, 64, {d(2.5)})[0], d(-2.5));
}

TEST_F(FloatOpsTest, ApproximateFunctionsAreWithinPtxErrorBounds) {
  auto one = [&](const std::string& op, float x) {
    return as_f(eval(op + " %d, %a", 32, 32, {f(x)})[0]);
  };
  EXPECT_NEAR(one("ex2.approx.ftz.f32", 3.5f), std::exp2(3.5), 2 * std::exp2(3.5) * 1e-7);
  EXPECT_NEAR(one("lg2.approx.f32", 10.0f), std::log2(10.0), 1e-6);
  EXPECT_NEAR(one("sin.approx.f32", 1.0f), std::sin(1.0), 1e-6);
  EXPECT_NEAR(one("cos.approx.f32", 1.0f), std::cos(1.0), 1e-6);
  EXPECT_NEAR(one("rsqrt.approx.f32", 4.0f), 0.5, 1e-7);
  EXPECT_NEAR(one("rcp.approx.ftz.f32", 3.0f), 1.0 / 3.0, 1e-7);
  EXPECT_NEAR(one("tanh.approx.f32", 0.5f), std::tanh(0.5), 1e-6);
  EXPECT_NEAR(one("sqrt.approx.f32", 9.0f), 3.0, 1e-6);
}

}  // namespace
}  // namespace kiln::sim::testing
