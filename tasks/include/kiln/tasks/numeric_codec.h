// Exact conversions between kiln's element types and double, identical on host and
// device: decode (bits -> double, exact for every dtype) and encode (double -> bits,
// round to nearest even; e4m3 saturates to +-448 since it has no infinity).
//
// The harness draws inputs on the GPU with encode() and compares outputs on the GPU
// and on the host with decode(), so a tolerance decision never depends on where it ran.
#pragma once

#include <cstdint>

#include "kiln/abi.h"
#include "kiln/tasks/bit_cast.h"
#include "kiln/tasks/host_device.h"

namespace kiln::tasks {

// 2^e for e in [-1022, 1023], built from its encoding (no libm on either side).
KILN_HD inline double pow2(int e) {
  return double_from_bits(static_cast<uint64_t>(e + 1023) << 52);
}

// A small IEEE-like float format: 1 sign bit, `ebits` exponent bits, `mbits` mantissa bits.
struct SmallFloat {
  int ebits;
  int mbits;
  int bias;
  bool ieee_specials;  // all-ones exponent = inf/NaN (f16, bf16, e5m2); false for e4m3
};

KILN_HD inline SmallFloat small_float_format(kiln_dtype dtype) {
  switch (dtype) {
    case KILN_F16:
      return {5, 10, 15, true};
    case KILN_BF16:
      return {8, 7, 127, true};
    case KILN_E5M2:
      return {5, 2, 15, true};
    default:
      return {4, 3, 7, false};  // KILN_E4M3
  }
}

KILN_HD inline double decode_small_float(uint32_t bits, SmallFloat f) {
  const uint32_t mantissa_mask = (1u << f.mbits) - 1;
  const uint32_t exponent_all = (1u << f.ebits) - 1;
  const bool negative = ((bits >> (f.ebits + f.mbits)) & 1u) != 0;
  const uint32_t exponent = (bits >> f.mbits) & exponent_all;
  const uint32_t mantissa = bits & mantissa_mask;
  double magnitude = 0;
  if (f.ieee_specials && exponent == exponent_all) {
    magnitude = mantissa != 0 ? double_from_bits(0x7ff8000000000000ull)
                              : double_from_bits(0x7ff0000000000000ull);
  } else if (!f.ieee_specials && exponent == exponent_all && mantissa == mantissa_mask) {
    magnitude = double_from_bits(0x7ff8000000000000ull);  // e4m3 NaN (S.1111.111)
  } else if (exponent == 0) {
    magnitude = static_cast<double>(mantissa) * pow2(1 - f.bias - f.mbits);
  } else {
    magnitude = static_cast<double>(mantissa | (1u << f.mbits)) *
                pow2(static_cast<int>(exponent) - f.bias - f.mbits);
  }
  return negative ? -magnitude : magnitude;
}

KILN_HD inline uint32_t encode_small_float(double x, SmallFloat f) {
  const uint64_t xbits = bits_of(x);
  const uint32_t sign = static_cast<uint32_t>(xbits >> 63) << (f.ebits + f.mbits);
  const uint32_t exponent_all = (1u << f.ebits) - 1;
  const uint32_t nan_bits = f.ieee_specials ? (exponent_all << f.mbits) | (1u << (f.mbits - 1))
                                            : (exponent_all << f.mbits) | ((1u << f.mbits) - 1);
  const uint32_t max_finite = f.ieee_specials
                                  ? ((exponent_all - 1) << f.mbits) | ((1u << f.mbits) - 1)
                                  : (exponent_all << f.mbits) | ((1u << f.mbits) - 2);
  const uint32_t overflow = f.ieee_specials ? exponent_all << f.mbits : max_finite;
  const int dexp = static_cast<int>((xbits >> 52) & 0x7ff);
  const uint64_t dman = xbits & ((1ull << 52) - 1);
  if (dexp == 0x7ff) return dman != 0 ? nan_bits : (sign | overflow);
  if (dexp == 0) return sign;  // zero or a double subnormal: far below every format's range
  const uint64_t m = dman | (1ull << 52);
  int e = dexp - 1023;
  const int min_exp = 1 - f.bias;
  if (e < min_exp) {
    // Subnormal: count units of 2^(min_exp - mbits), rounding to nearest even. A carry
    // into 2^mbits units is the smallest normal, whose encoding is the same integer.
    const int shift = 52 - f.mbits + (min_exp - e);
    if (shift > 63) return sign;
    uint64_t q = m >> shift;
    const uint64_t rem = m & ((1ull << shift) - 1);
    const uint64_t half = 1ull << (shift - 1);
    if (rem > half || (rem == half && (q & 1) != 0)) ++q;
    return sign | static_cast<uint32_t>(q);
  }
  const int shift = 52 - f.mbits;
  uint64_t q = m >> shift;
  const uint64_t rem = m & ((1ull << shift) - 1);
  const uint64_t half = 1ull << (shift - 1);
  if (rem > half || (rem == half && (q & 1) != 0)) ++q;
  if (q == (1ull << (f.mbits + 1))) {
    q >>= 1;
    ++e;
  }
  const int64_t biased = static_cast<int64_t>(e) + f.bias;
  const uint32_t mantissa = static_cast<uint32_t>(q - (1ull << f.mbits));
  if (f.ieee_specials) {
    if (biased >= static_cast<int64_t>(exponent_all)) return sign | overflow;
  } else if (biased > static_cast<int64_t>(exponent_all) ||
             (biased == static_cast<int64_t>(exponent_all) && mantissa == (1u << f.mbits) - 1)) {
    return sign | overflow;  // e4m3: saturate to the largest finite value
  }
  return sign | (static_cast<uint32_t>(biased) << f.mbits) | mantissa;
}

KILN_HD inline int dtype_size(kiln_dtype dtype) {
  switch (dtype) {
    case KILN_F16:
    case KILN_BF16:
      return 2;
    case KILN_F32:
    case KILN_I32:
      return 4;
    case KILN_F64:
    case KILN_I64:
      return 8;
    default:
      return 1;  // e4m3, e5m2, i8, u8
  }
}

KILN_HD inline bool dtype_is_float(kiln_dtype dtype) {
  return dtype == KILN_F16 || dtype == KILN_BF16 || dtype == KILN_F32 || dtype == KILN_F64 ||
         dtype == KILN_E4M3 || dtype == KILN_E5M2;
}

// The element's value; `bits` holds the element's bytes in its low bits.
KILN_HD inline double decode(kiln_dtype dtype, uint64_t bits) {
  switch (dtype) {
    case KILN_F16:
    case KILN_BF16:
    case KILN_E4M3:
    case KILN_E5M2:
      return decode_small_float(static_cast<uint32_t>(bits), small_float_format(dtype));
    case KILN_F32:
      return static_cast<double>(float_from_bits(static_cast<uint32_t>(bits)));
    case KILN_F64:
      return double_from_bits(bits);
    case KILN_I8:
      return static_cast<double>(static_cast<int8_t>(bits & 0xff));
    case KILN_U8:
      return static_cast<double>(bits & 0xff);
    case KILN_I32:
      return static_cast<double>(static_cast<int32_t>(bits & 0xffffffffu));
    case KILN_I64:
      return static_cast<double>(static_cast<int64_t>(bits));
  }
  return 0;
}

// x rounded to the dtype (integers: toward negative infinity, then clamped).
KILN_HD inline uint64_t encode(kiln_dtype dtype, double x) {
  switch (dtype) {
    case KILN_F16:
    case KILN_BF16:
    case KILN_E4M3:
    case KILN_E5M2:
      return encode_small_float(x, small_float_format(dtype));
    case KILN_F32:
      return bits_of(static_cast<float>(x));
    case KILN_F64:
      return bits_of(x);
    default:
      break;
  }
  double lo = 0, hi = 0;
  switch (dtype) {
    case KILN_I8:
      lo = -128;
      hi = 127;
      break;
    case KILN_U8:
      lo = 0;
      hi = 255;
      break;
    case KILN_I32:
      lo = -2147483648.0;
      hi = 2147483647.0;
      break;
    default:
      lo = -9223372036854775808.0;
      hi = 9223372036854774784.0;
      break;
  }
  if (!(x == x)) x = 0;
  double whole = static_cast<double>(static_cast<int64_t>(x < lo ? lo : (x > hi ? hi : x)));
  if (whole > x) whole -= 1;  // truncation went up for negative non-integers
  if (whole < lo) whole = lo;
  const auto value = static_cast<int64_t>(whole);
  const int size = dtype_size(dtype);
  return size == 8 ? static_cast<uint64_t>(value)
                   : static_cast<uint64_t>(value) & ((1ull << (8 * size)) - 1);
}

}  // namespace kiln::tasks
