// f16 and bf16 arithmetic, scalar and packed (.f16x2/.bf16x2): add/sub/mul/fma with .rn, .ftz,
// .sat and .relu; neg/abs/min/max; the approximate ex2 and tanh. Each result is computed
// exactly (or once-rounded) in double, then rounded to the half format in software.
#include <bit>
#include <cmath>
#include <cstdint>

#include "decoder.h"
#include "float_util.h"
#include "half.h"
#include "lane_ops.h"

namespace kiln::sim {

namespace {

using ptx::Opcode;
using ptx::Type;

enum : uint8_t { kFtz = 1, kSat = 2, kRelu = 4, kNaN = 8 };

enum HalfOp : uint8_t { Add, Sub, Mul, Fma, Neg, Abs, Min, Max, Ex2, Tanh };

inline double h_in(uint32_t bits, SmallFloat f, uint8_t flags) {
  double v = small_to_double(bits, f);
  if ((flags & kFtz) && (bits & 0x7fff) != 0 &&
      std::fabs(v) < std::ldexp(1.0, f.exponent_bits == 5 ? -14 : -126)) {
    return std::signbit(v) ? -0.0 : 0.0;
  }
  return v;
}

double min_of(double a, double b, bool nan) {
  if (std::isnan(a) || std::isnan(b)) {
    if (nan || (std::isnan(a) && std::isnan(b))) return NAN;
    return std::isnan(a) ? b : a;
  }
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
double max_of(double a, double b, bool nan) {
  if (std::isnan(a) || std::isnan(b)) {
    if (nan || (std::isnan(a) && std::isnan(b))) return NAN;
    return std::isnan(a) ? b : a;
  }
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

// p + z rounded to odd in double: the sum carries 53 bits, far more than the 2 * 11 + 2 a later
// round to f16/bf16 needs, so that second rounding gives the once-rounded result PTX defines.
// A plain double sum rounds twice when the exponents are far apart (bf16's 8-bit exponent):
// fma.rn.bf16 0xe62c * 0x1f60 + 0xa2e0 is 0xc617 on an H200, the double-rounded 0xc616.
inline double sum_round_to_odd(double p, double z) {
  double s = p + z;
  if (!std::isfinite(s)) return s;
  double bp = s - z, e = (p - bp) + (z - (s - bp));  // TwoSum: s + e == p + z exactly
  if (e == 0) return s;
  // The truncation of p + z: s itself when e points away from zero, else one ulp toward zero.
  double t = (e > 0) == (s > 0) ? s : std::nextafter(s, 0.0);
  uint64_t bits = std::bit_cast<uint64_t>(t) | 1;  // the odd one of t and its successor
  return std::bit_cast<double>(bits);
}

template <HalfOp Op>
inline uint32_t half_op(uint32_t a, uint32_t b, uint32_t c, SmallFloat f, uint8_t flags) {
  if constexpr (Op == Neg) return a ^ (1u << (f.exponent_bits + f.mantissa_bits));
  if constexpr (Op == Abs) return a & ~(1u << (f.exponent_bits + f.mantissa_bits));
  double x = h_in(a, f, flags), y = h_in(b, f, flags), z = h_in(c, f, flags), r = 0;
  switch (Op) {
    case Add:
      r = sum_round_to_odd(x, y);
      break;
    case Sub:
      r = sum_round_to_odd(x, -y);
      break;
    case Mul:
      r = x * y;
      break;
    case Fma:
      r = sum_round_to_odd(x * y, z);  // the product of two halves is exact in double
      break;
    case Min:
      r = min_of(x, y, flags & kNaN);
      break;
    case Max:
      r = max_of(x, y, flags & kNaN);
      break;
    case Ex2:
      r = std::exp2(x);
      break;
    case Tanh:
      r = std::tanh(x);
      break;
    default:
      break;
  }
  if ((flags & kRelu) && !std::isnan(r) && r <= 0) r = 0;  // -0.0 too: .relu gives +0.0
  if (flags & kSat) r = saturate(r);
  uint32_t out = double_to_small(r, f, kRoundNearest, false);
  if (flags & kFtz) {
    uint32_t exp_mask = ((1u << f.exponent_bits) - 1) << f.mantissa_bits;
    if ((out & exp_mask) == 0) out &= 1u << (f.exponent_bits + f.mantissa_bits);
  }
  return out;
}

// ops: d, a[, b[, c]]; inst.width: 1 for bf16; inst.vec: 2 for packed.
template <HalfOp Op, int N>
void half_handler(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t* a = x.reg(o[1]);
  const uint64_t* b = N > 1 ? x.reg(o[2]) : a;
  const uint64_t* c = N > 2 ? x.reg(o[3]) : a;
  SmallFloat f = in.width ? kBF16 : kF16;
  uint8_t flags = in.flags;
  bool packed = in.vec == 2;
  for_lanes(mask, [&](uint32_t l) {
    uint32_t lo = half_op<Op>(a[l] & 0xffff, b[l] & 0xffff, c[l] & 0xffff, f, flags);
    if (!packed) {
      d[l] = lo;
      return;
    }
    uint32_t hi =
        half_op<Op>((a[l] >> 16) & 0xffff, (b[l] >> 16) & 0xffff, (c[l] >> 16) & 0xffff, f, flags);
    d[l] = (hi << 16) | lo;
  });
}

}  // namespace

bool decode_half(Decoder& d, const ptx::Instruction& in, Inst& out) {
  Type t = in.type();
  out.klass = InstClass::Fp16;
  out.width = (t == Type::BF16 || t == Type::BF16x2) ? 1 : 0;
  out.vec = (t == Type::F16x2 || t == Type::BF16x2) ? 2 : 1;
  if (in.has_modifier("ftz")) out.flags |= kFtz;
  if (in.has_modifier("sat")) out.flags |= kSat;
  if (in.has_modifier("relu")) out.flags |= kRelu;
  if (in.has_modifier("NaN")) out.flags |= kNaN;
  if (rounding_from_modifiers(in) != kRoundNearest) {
    d.fail("half-precision arithmetic supports only .rn");
    return false;
  }
  bool approx = in.has_modifier("approx");
  int n = 2;
  switch (in.opcode) {
    case Opcode::Add:
      out.fn = &half_handler<Add, 2>;
      break;
    case Opcode::Sub:
      out.fn = &half_handler<Sub, 2>;
      break;
    case Opcode::Mul:
      out.fn = &half_handler<Mul, 2>;
      break;
    case Opcode::Fma:
      out.fn = &half_handler<Fma, 3>;
      n = 3;
      break;
    case Opcode::Min:
      out.fn = &half_handler<Min, 2>;
      break;
    case Opcode::Max:
      out.fn = &half_handler<Max, 2>;
      break;
    case Opcode::Neg:
      out.fn = &half_handler<Neg, 1>;
      n = 1;
      break;
    case Opcode::Abs:
      out.fn = &half_handler<Abs, 1>;
      n = 1;
      break;
    case Opcode::Ex2:
      if (!approx) return false;
      out.fn = &half_handler<Ex2, 1>;
      n = 1;
      break;
    case Opcode::Tanh:
      if (!approx) return false;
      out.fn = &half_handler<Tanh, 1>;
      n = 1;
      break;
    default:
      return false;
  }
  if (in.operands.size() != static_cast<size_t>(n + 1)) return false;
  Type reg_type = out.vec == 2 ? Type::B32 : Type::B16;
  for (const ptx::Operand& op : in.operands) d.push(d.value(op, reg_type));
  return true;
}

}  // namespace kiln::sim
