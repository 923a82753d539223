// numeric_codec.h: exact decoding and round-to-nearest-even encoding for every dtype.
#include "kiln/tasks/numeric_codec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace kiln::tasks {
namespace {

bool is_nan_bits(kiln_dtype dtype, uint64_t bits) { return std::isnan(decode(dtype, bits)); }

TEST(NumericCodec, EveryHalfRoundTripsThroughDouble) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    if (is_nan_bits(KILN_F16, bits)) continue;
    ASSERT_EQ(encode(KILN_F16, decode(KILN_F16, bits)), bits) << std::hex << bits;
  }
}

TEST(NumericCodec, EveryBf16RoundTripsThroughDouble) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    if (is_nan_bits(KILN_BF16, bits)) continue;
    ASSERT_EQ(encode(KILN_BF16, decode(KILN_BF16, bits)), bits) << std::hex << bits;
  }
}

TEST(NumericCodec, EveryFp8RoundTrips) {
  for (kiln_dtype dtype : {KILN_E4M3, KILN_E5M2}) {
    for (uint32_t bits = 0; bits < 0x100; ++bits) {
      if (is_nan_bits(dtype, bits)) continue;
      ASSERT_EQ(encode(dtype, decode(dtype, bits)), bits) << dtype << " " << std::hex << bits;
    }
  }
}

TEST(NumericCodec, DecodesKnownHalfValues) {
  EXPECT_EQ(decode(KILN_F16, 0x3c00), 1.0);
  EXPECT_EQ(decode(KILN_F16, 0xc000), -2.0);
  EXPECT_EQ(decode(KILN_F16, 0x7bff), 65504.0);
  EXPECT_EQ(decode(KILN_F16, 0x0001), std::ldexp(1.0, -24));
  EXPECT_TRUE(std::isinf(decode(KILN_F16, 0x7c00)));
  EXPECT_TRUE(std::isnan(decode(KILN_F16, 0x7e5a)));
  EXPECT_EQ(decode(KILN_BF16, 0x3f80), 1.0);
  EXPECT_EQ(decode(KILN_E4M3, 0x7e), 448.0);
  EXPECT_TRUE(std::isnan(decode(KILN_E4M3, 0x7f)));
  EXPECT_EQ(decode(KILN_E5M2, 0x7b), 57344.0);
}

TEST(NumericCodec, RoundsHalfwayCasesToEven) {
  // 1 + 2^-11 lies halfway between 1 and the next half (1 + 2^-10): ties go to the even 1.
  EXPECT_EQ(encode(KILN_F16, 1.0 + std::ldexp(1.0, -11)), 0x3c00u);
  // 1 + 3 * 2^-11 lies halfway between 0x3c01 and 0x3c02: even is 0x3c02.
  EXPECT_EQ(encode(KILN_F16, 1.0 + 3 * std::ldexp(1.0, -11)), 0x3c02u);
  // Just above the tie rounds up.
  EXPECT_EQ(encode(KILN_F16, 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30)), 0x3c01u);
  // Subnormals: half a unit (2^-25) goes to zero (even), 1.5 units to 2.
  EXPECT_EQ(encode(KILN_F16, std::ldexp(1.0, -25)), 0x0000u);
  EXPECT_EQ(encode(KILN_F16, 3 * std::ldexp(1.0, -25)), 0x0002u);
}

TEST(NumericCodec, OverflowGoesToInfinityOrSaturates) {
  EXPECT_EQ(encode(KILN_F16, 65519.0), 0x7bffu);
  EXPECT_EQ(encode(KILN_F16, 65520.0), 0x7c00u);  // the tie between 65504 and 2^16 rounds up
  EXPECT_EQ(encode(KILN_F16, -1e9), 0xfc00u);
  EXPECT_EQ(encode(KILN_BF16, 1e39), 0x7f80u);
  EXPECT_EQ(encode(KILN_E4M3, 1000.0), 0x7eu);  // e4m3 has no infinity: saturate to 448
  EXPECT_EQ(encode(KILN_E4M3, -1000.0), 0xfeu);
}

TEST(NumericCodec, NanEncodesAsNan) {
  EXPECT_TRUE(is_nan_bits(KILN_F16, encode(KILN_F16, std::nan(""))));
  EXPECT_TRUE(is_nan_bits(KILN_BF16, encode(KILN_BF16, std::nan(""))));
  EXPECT_TRUE(is_nan_bits(KILN_E4M3, encode(KILN_E4M3, std::nan(""))));
}

TEST(NumericCodec, FloatAndDoubleAreExact) {
  const float f = 0.1f;
  uint32_t fbits = 0;
  std::memcpy(&fbits, &f, sizeof f);
  EXPECT_EQ(encode(KILN_F32, 0.1), fbits);
  EXPECT_EQ(decode(KILN_F32, fbits), static_cast<double>(f));
  EXPECT_EQ(decode(KILN_F64, encode(KILN_F64, 0.1)), 0.1);
}

TEST(NumericCodec, IntegersRoundDownAndClamp) {
  EXPECT_EQ(encode(KILN_I32, 2.7), 2u);
  EXPECT_EQ(decode(KILN_I32, encode(KILN_I32, -2.5)), -3.0);
  EXPECT_EQ(encode(KILN_I8, 1000.0), 127u);
  EXPECT_EQ(decode(KILN_I8, encode(KILN_I8, -1000.0)), -128.0);
  EXPECT_EQ(encode(KILN_U8, -5.0), 0u);
  EXPECT_EQ(decode(KILN_I64, encode(KILN_I64, -7.0)), -7.0);
}

TEST(NumericCodec, SizesAndKinds) {
  EXPECT_EQ(dtype_size(KILN_F16), 2);
  EXPECT_EQ(dtype_size(KILN_F64), 8);
  EXPECT_EQ(dtype_size(KILN_E4M3), 1);
  EXPECT_TRUE(dtype_is_float(KILN_BF16));
  EXPECT_FALSE(dtype_is_float(KILN_I32));
}

}  // namespace
}  // namespace kiln::tasks
