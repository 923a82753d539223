// f16 and bf16 values as bits: exact conversion to float, and correctly rounded conversion from
// float or double with any PTX rounding mode (software, independent of the host FPU).
#pragma once

#include <cstdint>

namespace kiln::sim {

// A small binary floating-point format: sign, `exponent_bits`, `mantissa_bits`.
struct SmallFloat {
  uint32_t exponent_bits;
  uint32_t mantissa_bits;
  bool has_infinity;  // false: e4m3 (no infinities; only S.1111.111 is NaN)
};

inline constexpr SmallFloat kF16{5, 10, true};
inline constexpr SmallFloat kBF16{8, 7, true};
inline constexpr SmallFloat kE4M3{4, 3, false};
inline constexpr SmallFloat kE5M2{5, 2, true};
inline constexpr SmallFloat kTF32{8, 10, true};

// The exact value of `bits` in `format`, as a double.
double small_to_double(uint32_t bits, SmallFloat format);
// `value` rounded into `format` with PTX rounding mode `mode` (0 rn, 1 rz, 2 rm, 3 rp, 4 rna). With
// `satfinite`, overflow and infinities give the largest finite value of the sign (NaN stays
// NaN); e4m3 always saturates to NaN-free finite or NaN per .satfinite rules.
uint32_t double_to_small(double value, SmallFloat format, uint8_t mode, bool satfinite);

inline float half_to_float(uint16_t h) { return static_cast<float>(small_to_double(h, kF16)); }
inline float bf16_to_float(uint16_t h) { return static_cast<float>(small_to_double(h, kBF16)); }
inline uint16_t float_to_half(double v, uint8_t mode = 0) {
  return static_cast<uint16_t>(double_to_small(v, kF16, mode, false));
}
inline uint16_t float_to_bf16(double v, uint8_t mode = 0) {
  return static_cast<uint16_t>(double_to_small(v, kBF16, mode, false));
}

}  // namespace kiln::sim
