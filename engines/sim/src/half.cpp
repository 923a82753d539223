#include "half.h"

#include <cmath>
#include <cstdint>

namespace kiln::sim {

double small_to_double(uint32_t bits, SmallFloat f) {
  uint32_t m_bits = f.mantissa_bits, e_bits = f.exponent_bits;
  uint32_t sign = (bits >> (m_bits + e_bits)) & 1;
  uint32_t exp = (bits >> m_bits) & ((1u << e_bits) - 1);
  uint32_t man = bits & ((1u << m_bits) - 1);
  int bias = (1 << (e_bits - 1)) - 1;
  double s = sign ? -1.0 : 1.0;
  uint32_t max_exp = (1u << e_bits) - 1;
  if (exp == max_exp) {
    if (f.has_infinity) return man == 0 ? s * INFINITY : NAN;
    if (man == (1u << m_bits) - 1) return NAN;  // e4m3: S.1111.111
  }
  if (exp == 0)
    return s * std::ldexp(static_cast<double>(man), 1 - bias - static_cast<int>(m_bits));
  return s * std::ldexp(static_cast<double>(man | (1u << m_bits)),
                        static_cast<int>(exp) - bias - static_cast<int>(m_bits));
}

uint32_t double_to_small(double v, SmallFloat f, uint8_t mode, bool satfinite) {
  uint32_t m_bits = f.mantissa_bits, e_bits = f.exponent_bits;
  uint32_t sign_shift = m_bits + e_bits;
  int bias = (1 << (e_bits - 1)) - 1;
  uint32_t max_exp_field = (1u << e_bits) - 1;
  // The largest finite encoding.
  uint32_t max_finite = f.has_infinity ? ((max_exp_field - 1) << m_bits) | ((1u << m_bits) - 1)
                                       : (max_exp_field << m_bits) | ((1u << m_bits) - 2);
  // The canonical NaN: every exponent and mantissa bit set (0x7fff for f16 and bf16).
  uint32_t nan = (max_exp_field << m_bits) | ((1u << m_bits) - 1);
  uint32_t inf = max_exp_field << m_bits;
  if (std::isnan(v)) return nan;
  uint32_t sign = std::signbit(v) ? 1u : 0u;
  double a = std::fabs(v);
  uint32_t sign_bit = sign << sign_shift;
  // Overflow result in the given direction.
  auto overflow = [&]() -> uint32_t {
    bool to_inf = mode == 0 || (mode == 3 && !sign) || (mode == 2 && sign);
    if (satfinite || !f.has_infinity) {
      if (!f.has_infinity && !satfinite && to_inf) return sign_bit | nan;
      return sign_bit | max_finite;
    }
    return sign_bit | (to_inf ? inf : max_finite);
  };
  if (std::isinf(a)) {
    if (satfinite || !f.has_infinity) return satfinite ? sign_bit | max_finite : sign_bit | nan;
    return sign_bit | inf;
  }
  if (a == 0) return sign_bit;
  // Scale to an integer significand with m_bits fraction bits at the right exponent.
  int e = std::ilogb(a);
  int min_exp = 1 - bias;
  if (e < min_exp) e = min_exp;  // subnormal range: fixed quantum
  double quantum = std::ldexp(1.0, e - static_cast<int>(m_bits));
  double scaled = a / quantum;  // exact: a power-of-two scaling
  double floor_v = std::floor(scaled);
  double frac = scaled - floor_v;
  uint64_t q = static_cast<uint64_t>(floor_v);
  bool up = false;
  switch (mode) {
    case 0:
      up = frac > 0.5 || (frac == 0.5 && (q & 1));
      break;
    case 1:
      up = false;
      break;
    case 2:
      up = sign && frac > 0;
      break;
    case 4:  // ties away from zero
      up = frac >= 0.5;
      break;
    default:
      up = !sign && frac > 0;
      break;
  }
  if (up) ++q;
  // q is the significand in units of quantum at exponent e (may carry to 2^(m_bits+1)).
  if (q >= (2ull << m_bits)) {
    q >>= 1;
    ++e;
  }
  uint32_t exp_field, man;
  if (q < (1ull << m_bits)) {  // subnormal
    exp_field = 0;
    man = static_cast<uint32_t>(q);
  } else {
    exp_field = static_cast<uint32_t>(e + bias);
    man = static_cast<uint32_t>(q) & ((1u << m_bits) - 1);
  }
  uint32_t magnitude = (exp_field << m_bits) | man;
  if (f.has_infinity ? exp_field >= max_exp_field : magnitude > max_finite) return overflow();
  return sign_bit | magnitude;
}

}  // namespace kiln::sim
