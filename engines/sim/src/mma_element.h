// Element types of tensor-core operands (mma.sync and wgmma): which PTX types they are, how
// many bits one element takes in a register or in shared memory, and the exact value of one.
#pragma once

#include <algorithm>
#include <bit>
#include <climits>
#include <cstdint>
#include <optional>

#include "half.h"
#include "kiln/ptx/types.h"

namespace kiln::sim {

enum class MmaElement : uint8_t { F16, BF16, E4M3, E5M2, TF32, F32, S8, U8, S32 };

inline std::optional<MmaElement> mma_element_of(ptx::Type type) {
  switch (type) {
    case ptx::Type::F16:
      return MmaElement::F16;
    case ptx::Type::BF16:
      return MmaElement::BF16;
    case ptx::Type::E4M3:
      return MmaElement::E4M3;
    case ptx::Type::E5M2:
      return MmaElement::E5M2;
    case ptx::Type::TF32:
      return MmaElement::TF32;
    case ptx::Type::F32:
      return MmaElement::F32;
    case ptx::Type::S8:
      return MmaElement::S8;
    case ptx::Type::U8:
      return MmaElement::U8;
    case ptx::Type::S32:
      return MmaElement::S32;
    default:
      return std::nullopt;
  }
}

inline uint32_t mma_element_bits(MmaElement e) {
  switch (e) {
    case MmaElement::E4M3:
    case MmaElement::E5M2:
    case MmaElement::S8:
    case MmaElement::U8:
      return 8;
    case MmaElement::F16:
    case MmaElement::BF16:
      return 16;
    default:
      return 32;
  }
}

inline bool is_integer(MmaElement e) {
  return e == MmaElement::S8 || e == MmaElement::U8 || e == MmaElement::S32;
}

// The exact value of an element's bits (the low mma_element_bits(e) bits of `bits`). tf32
// ignores the 13 low mantissa bits of its 32-bit container.
inline double mma_element_value(uint32_t bits, MmaElement e) {
  switch (e) {
    case MmaElement::F16:
      return small_to_double(bits, kF16);
    case MmaElement::BF16:
      return small_to_double(bits, kBF16);
    case MmaElement::E4M3:
      return small_to_double(bits, kE4M3);
    case MmaElement::E5M2:
      return small_to_double(bits, kE5M2);
    case MmaElement::TF32:
      return std::bit_cast<float>(bits & 0xffffe000u);
    case MmaElement::F32:
      return std::bit_cast<float>(bits);
    case MmaElement::S8:
      return static_cast<int8_t>(bits & 0xff);
    case MmaElement::U8:
      return static_cast<double>(bits & 0xff);
    case MmaElement::S32:
      return static_cast<int32_t>(bits);
  }
  return 0;
}

// The accumulator as the D type stores it: f32, f16 (rounded once), or s32 wrapped or, with
// .satfinite, clamped to the int32 range.
inline uint32_t accumulator_bits(double sum, MmaElement acc, bool satfinite) {
  if (acc == MmaElement::F16) return double_to_small(sum, kF16, 0, false);
  if (acc != MmaElement::S32) return std::bit_cast<uint32_t>(static_cast<float>(sum));
  // Integer products and sums are exact in a double (|sum| < 2^53).
  int64_t v = static_cast<int64_t>(sum);
  if (satfinite) v = std::clamp<int64_t>(v, INT32_MIN, INT32_MAX);
  return static_cast<uint32_t>(v);
}

}  // namespace kiln::sim
