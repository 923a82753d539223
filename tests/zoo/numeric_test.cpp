// Checks kiln/zoo/numeric.h: exact decoding and round-to-nearest-even encoding of f16,
// bf16 and E4M3, against formulas written independently here.
#include "kiln/zoo/numeric.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace kiln::zoo {
namespace {

uint32_t bits_of(float x) {
  uint32_t b = 0;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
float float_of(uint32_t b) {
  float x = 0;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

// IEEE binary16 by its definition.
double half_by_definition(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (e == 31) return m ? std::nan("") : sign * INFINITY;
  if (e == 0) return sign * std::ldexp(m, -24);
  return sign * std::ldexp(1024 + m, e - 25);
}

// OCP E4M3 by its definition: bias 7, S.1111.111 NaN, no infinities.
double e4m3_by_definition(uint8_t b) {
  const int e = (b >> 3) & 0xf, m = b & 7;
  const double sign = (b & 0x80) ? -1.0 : 1.0;
  if (e == 15 && m == 7) return std::nan("");
  if (e == 0) return sign * std::ldexp(m, -9);  // m/8 * 2^(1-7)
  return sign * std::ldexp(8 + m, e - 10);      // (1 + m/8) * 2^(e-7)
}

TEST(Numeric, EveryHalfBitPatternDecodesExactlyAndRoundTrips) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const auto h = static_cast<uint16_t>(b);
    const float f = half_to_float(h);
    const double want = half_by_definition(h);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << b;
    } else {
      ASSERT_EQ(static_cast<double>(f), want) << std::hex << b;
      ASSERT_EQ(std::signbit(f), std::signbit(want)) << std::hex << b;
    }
    ASSERT_EQ(float_to_half(f), h) << "bits 0x" << std::hex << b;
    if (!std::isnan(want)) {
      ASSERT_EQ(double_to_half(want), h) << "bits 0x" << std::hex << b;
    }
  }
}

TEST(Numeric, HalfRoundsToNearestEven) {
  EXPECT_EQ(double_to_half(1 + std::ldexp(1, -11)), 0x3c00);      // tie -> even (1.0)
  EXPECT_EQ(double_to_half(1 + 3 * std::ldexp(1, -11)), 0x3c02);  // tie -> even (mantissa 2)
  EXPECT_EQ(double_to_half(1 + std::ldexp(1, -11) + std::ldexp(1, -30)), 0x3c01);  // above tie
  EXPECT_EQ(double_to_half(65519.0), 0x7bff);  // rounds down to 65504
  EXPECT_EQ(double_to_half(65520.0), 0x7c00);  // tie past the max -> inf
  EXPECT_EQ(double_to_half(-1e9), 0xfc00);
  EXPECT_EQ(double_to_half(std::ldexp(1, -25)), 0x0000);      // half the smallest subnormal
  EXPECT_EQ(double_to_half(3 * std::ldexp(1, -25)), 0x0002);  // tie between 1 and 2 units
  EXPECT_EQ(double_to_half(-0.0), 0x8000);
  EXPECT_EQ(double_to_half(std::nan("")) & 0x7fff, 0x7e00);
  // 2049 from a float: a tie between 2048 and 2050 goes to 2048.
  EXPECT_EQ(float_to_half(2049.0f), 0x6800);
}

TEST(Numeric, EveryBf16BitPatternRoundTrips) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const auto h = static_cast<uint16_t>(b);
    const float f = bf16_to_float(h);
    ASSERT_EQ(bits_of(f), b << 16);
    ASSERT_EQ(float_to_bf16(f), h) << std::hex << b;
  }
}

TEST(Numeric, Bf16RoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16(1 + std::ldexp(1.0f, -8)), 0x3f80);      // tie -> even (1.0)
  EXPECT_EQ(float_to_bf16(1 + 3 * std::ldexp(1.0f, -8)), 0x3f82);  // tie -> even
  EXPECT_EQ(float_to_bf16(1 + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 0x3f81);
  EXPECT_EQ(float_to_bf16(float_of(0x7f7fffff)), 0x7f80);  // max float -> inf
  EXPECT_EQ(float_to_bf16(float_of(0x7f7f7fff)), 0x7f7f);  // just below the tie
  EXPECT_EQ(float_to_bf16(float_of(0x00018000)), 0x0002);  // subnormal tie -> even
  EXPECT_EQ(float_to_bf16(-2.0f), 0xc000);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  // A NaN whose payload lies only in the dropped bits stays NaN (not infinity).
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(float_of(0x7f800001)))));
  // From double: 1 + 2^-8 + 2^-40 is just above a tie; rounding through float first would
  // land exactly on the tie and go down to 1.0.
  EXPECT_EQ(double_to_bf16(1 + std::ldexp(1, -8) + std::ldexp(1, -40)), 0x3f81);
}

TEST(Numeric, EveryE4m3ValueDecodesPerTheOcpSpec) {
  for (int b = 0; b < 256; ++b) {
    const auto byte = static_cast<uint8_t>(b);
    const double want = e4m3_by_definition(byte);
    const float got = e4m3_to_float(byte);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << b;
      EXPECT_EQ(byte & 0x7f, 0x7f) << "only S.1111.111 is NaN, got NaN for " << b;
      continue;
    }
    EXPECT_EQ(static_cast<double>(got), want) << b;
    EXPECT_EQ(float_to_e4m3(got), byte) << "round trip of " << b;
    EXPECT_EQ(float_to_e4m3(got, Fp8Overflow::kNaN), byte) << "round trip of " << b;
  }
  EXPECT_EQ(e4m3_to_float(0x7e), 448.0f);
  EXPECT_EQ(e4m3_to_float(0xfe), -448.0f);
  EXPECT_EQ(e4m3_to_float(0x01), std::ldexp(1.0f, -9));  // smallest subnormal
  EXPECT_EQ(e4m3_to_float(0x07), 7 * std::ldexp(1.0f, -9));
  EXPECT_EQ(e4m3_to_float(0x08), std::ldexp(1.0f, -6));  // smallest normal
  EXPECT_EQ(e4m3_to_float(0x38), 1.0f);
  EXPECT_EQ(e4m3_to_float(0x78), 256.0f);  // exponent 15 holds finite values
}

TEST(Numeric, E4m3RoundsToNearestEvenAndSaturatesOrBecomesNaN) {
  EXPECT_EQ(float_to_e4m3(1.0625f), 0x38);                    // tie between 1 and 1.125 -> 1 (even)
  EXPECT_EQ(float_to_e4m3(1.1875f), 0x3a);                    // tie between 1.125 and 1.25 -> 1.25
  EXPECT_EQ(float_to_e4m3(std::ldexp(1.0f, -10)), 0x00);      // half the smallest subnormal
  EXPECT_EQ(float_to_e4m3(3 * std::ldexp(1.0f, -10)), 0x02);  // tie between 1 and 2 units
  EXPECT_EQ(float_to_e4m3(464.0f), 0x7e);  // tie between 448 and (NaN) 480 -> 448
  EXPECT_EQ(float_to_e4m3(464.0f, Fp8Overflow::kNaN), 0x7e);
  EXPECT_EQ(float_to_e4m3(465.0f), 0x7e);  // saturates
  EXPECT_EQ(float_to_e4m3(465.0f, Fp8Overflow::kNaN), 0x7f);
  EXPECT_EQ(float_to_e4m3(-1e6f), 0xfe);
  EXPECT_EQ(float_to_e4m3(-INFINITY, Fp8Overflow::kNaN), 0xff);
  EXPECT_EQ(float_to_e4m3(INFINITY), 0x7e);
  EXPECT_EQ(float_to_e4m3(std::nanf("")) & 0x7f, 0x7f);
  EXPECT_EQ(float_to_e4m3(-0.0f), 0x80);
}

TEST(Numeric, IntegersRoundToNearestEvenAndSaturate) {
  int32_t v[4] = {};
  encode_element(KILN_I32, v, 0, 2.5);
  encode_element(KILN_I32, v, 1, -3.5);
  encode_element(KILN_I32, v, 2, 1e12);
  encode_element(KILN_I32, v, 3, std::nan(""));
  EXPECT_EQ(v[0], 2);
  EXPECT_EQ(v[1], -4);
  EXPECT_EQ(v[2], std::numeric_limits<int32_t>::max());
  EXPECT_EQ(v[3], 0);
  EXPECT_EQ(decode_element(KILN_I32, v, 1), -4.0);
}

TEST(Numeric, DtypeNamesParseAndSize) {
  for (const char* name : {"f16", "bf16", "f32", "f64", "e4m3", "e5m2", "i8", "u8", "i32", "i64"}) {
    const auto dtype = parse_dtype(name);
    ASSERT_TRUE(dtype.has_value()) << name;
    EXPECT_EQ(dtype_name(*dtype), name);
    EXPECT_GT(dtype_size(*dtype), 0u);
  }
  EXPECT_FALSE(parse_dtype("fp16").has_value());
  EXPECT_EQ(dtype_size(KILN_BF16), 2u);
  EXPECT_EQ(dtype_size(KILN_E4M3), 1u);
}

}  // namespace
}  // namespace kiln::zoo
