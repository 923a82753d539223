// Floating-point helpers shared by the float, half and conversion handlers: rounding-mode
// scopes, subnormal flushing, saturation.
#pragma once

#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kiln/ptx/instruction.h"

namespace kiln::sim {

// PTX rounding modifiers: 0 .rn (default), 1 .rz, 2 .rm, 3 .rp; integer rounding .rni/.rzi/
// .rmi/.rpi map to the same numbers.
enum : uint8_t {
  kRoundNearest = 0,
  kRoundZero = 1,
  kRoundDown = 2,
  kRoundUp = 3,
  kRoundNearestAway = 4  // .rna (tf32): ties away from zero; only for software rounding
};

inline uint8_t rounding_from_modifiers(const ptx::Instruction& in) {
  for (const std::string& m : in.modifiers) {
    if (m == "rz" || m == "rzi") return kRoundZero;
    if (m == "rm" || m == "rmi") return kRoundDown;
    if (m == "rp" || m == "rpi") return kRoundUp;
    if (m == "rna") return kRoundNearestAway;
  }
  return kRoundNearest;
}

// Sets the host rounding mode for the lifetime of the scope (nothing for round-to-nearest).
class RoundingScope {
 public:
  explicit RoundingScope(uint8_t mode) : mode_(mode) {
    if (mode_ == kRoundNearest || mode_ == kRoundNearestAway) return;
    std::fesetround(mode_ == kRoundZero   ? FE_TOWARDZERO
                    : mode_ == kRoundDown ? FE_DOWNWARD
                                          : FE_UPWARD);
  }
  ~RoundingScope() {
    if (mode_ != kRoundNearest && mode_ != kRoundNearestAway) std::fesetround(FE_TONEAREST);
  }
  RoundingScope(const RoundingScope&) = delete;
  RoundingScope& operator=(const RoundingScope&) = delete;

 private:
  uint8_t mode_;
};

inline float flush_subnormal(float v) {
  uint32_t bits = std::bit_cast<uint32_t>(v);
  if ((bits & 0x7f800000u) == 0) return std::bit_cast<float>(bits & 0x80000000u);
  return v;
}

// .sat: clamp to [0, 1], NaN to 0; -0.0 to +0.0 (as an H200 does).
template <typename T>
inline T saturate(T v) {
  if (!(v > T(0))) return T(0);
  if (v > T(1)) return T(1);
  return v;
}

// The NaN an H200 writes for every f32 result that is NaN (arithmetic, min/max, abs/neg,
// cvt.f32.f16, cvt.rXi.f32.f32): the input's payload is not propagated.
inline constexpr uint32_t kCanonicalNanF32 = 0x7fffffffu;

inline float canonical_nan_f32(float v) {
  return std::isnan(v) ? std::bit_cast<float>(kCanonicalNanF32) : v;
}

}  // namespace kiln::sim
