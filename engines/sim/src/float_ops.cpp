// f32 and f64 arithmetic: add/sub/mul/fma/mad/div with the PTX rounding modes (.rn .rz .rm
// .rp), .ftz and .sat; abs/neg/min/max/copysign; rcp/sqrt/rsqrt and the approximate special
// functions (sin, cos, lg2, ex2, tanh), computed with the C library, which is well within
// PTX's documented error bounds. Two follow the hardware's own steps, because their error is
// mostly in those steps: sin/cos.approx.f32 reduce the argument as the GPU does (x times
// 1/(2 pi) in f32, rounded toward zero, before the unit's sine), and rcp.approx.ftz.f64
// works on the high 32 bits only (low words of input and result zero), as the H200 does.
// This file is compiled with -frounding-math: directed rounding
// uses the host FPU's rounding mode, set around the lane loop.
#include <cfenv>
#include <cmath>
#include <cstring>
#include <limits>

#include "decoder.h"
#include "float_util.h"
#include "lane_ops.h"

namespace kiln::sim {

namespace {

using ptx::Opcode;
using ptx::Type;

enum : uint8_t { kFtz = 1, kSat = 2, kPropagateNan = 4, kAbs = 8 };

template <typename T>
inline T finish(T v, uint8_t flags) {
  if constexpr (std::is_same_v<T, float>) {
    if (flags & kFtz) v = flush_subnormal(v);
  }
  if (flags & kSat) v = saturate(v);
  return v;
}

// f32 results that are NaN become the canonical 0x7fffffff (what an H200 returns; PTX leaves
// the NaN's payload unspecified). f64 keeps the host's NaN, which matched the H200 bit for bit.
template <typename T, bool Canonical>
inline T nan_out(T v) {
  if constexpr (std::is_same_v<T, float> && Canonical) return canonical_nan_f32(v);
  return v;
}

template <typename T>
inline T input(T v, uint8_t flags) {
  if constexpr (std::is_same_v<T, float>) {
    if (flags & kFtz) return flush_subnormal(v);
  }
  return v;
}

// N sources, op F(T...), rounding mode in inst.mode, ftz/sat in inst.flags. Canonical: a NaN
// f32 result is written as kCanonicalNanF32 (all but copysign).
template <typename T, int N, auto F, bool Canonical = true>
void fp_op(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t* a = x.reg(o[1]);
  const uint64_t* b = N > 1 ? x.reg(o[2]) : a;
  const uint64_t* c = N > 2 ? x.reg(o[3]) : a;
  RoundingScope rounding(in.mode);
  uint8_t flags = in.flags;
  if (flags == 0) {
    for_lanes(mask, [&](uint32_t l) {
      if constexpr (N == 1) d[l] = put<T>(nan_out<T, Canonical>(F(get<T>(a[l]))));
      if constexpr (N == 2) d[l] = put<T>(nan_out<T, Canonical>(F(get<T>(a[l]), get<T>(b[l]))));
      if constexpr (N == 3) {
        d[l] = put<T>(nan_out<T, Canonical>(F(get<T>(a[l]), get<T>(b[l]), get<T>(c[l]))));
      }
    });
    return;
  }
  for_lanes(mask, [&](uint32_t l) {
    T r;
    if constexpr (N == 1) r = F(input(get<T>(a[l]), flags));
    if constexpr (N == 2) r = F(input(get<T>(a[l]), flags), input(get<T>(b[l]), flags));
    if constexpr (N == 3) {
      r = F(input(get<T>(a[l]), flags), input(get<T>(b[l]), flags), input(get<T>(c[l]), flags));
    }
    d[l] = put<T>(nan_out<T, Canonical>(finish(r, flags)));
  });
}

template <typename T>
T add(T a, T b) {
  return a + b;
}
template <typename T>
T sub(T a, T b) {
  return a - b;
}
template <typename T>
T mul(T a, T b) {
  return a * b;
}
template <typename T>
T fma_op(T a, T b, T c) {
  return std::fma(a, b, c);
}
template <typename T>
T div(T a, T b) {
  return a / b;
}
template <typename T>
T abs_op(T a) {
  return std::fabs(a);
}
template <typename T>
T neg(T a) {
  return -a;
}
template <typename T>
T rcp(T a) {
  return T(1) / a;
}
template <typename T>
T sqrt_op(T a) {
  return std::sqrt(a);
}
template <typename T>
T rsqrt(T a) {
  return T(1) / std::sqrt(a);
}
// x / (2 pi) as the GPU computes it before its sine unit: times 1/(2 pi) in f32 (0x3e22f983),
// rounded toward zero. Past [-pi, pi] this quantization is most of sin.approx's error (the
// H200 differs from the true sine by ~100 ulp near x = -100; this model by 2-4).
inline double hardware_turns(float a) {
  const double product = static_cast<double>(a) * static_cast<double>(0x1.45f306p-3f);  // exact
  float turns = static_cast<float>(product);
  if (std::fabs(static_cast<double>(turns)) > std::fabs(product))
    turns = std::nextafter(turns, 0.0f);
  return turns;
}
constexpr double kTwoPi = 6.283185307179586476925286766559;

template <typename T>
T sin_op(T a) {
  if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(std::sin(kTwoPi * hardware_turns(a)));
  } else {
    return std::sin(a);
  }
}
template <typename T>
T cos_op(T a) {
  if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(std::cos(kTwoPi * hardware_turns(a)));
  } else {
    return std::cos(a);
  }
}
// rcp.approx.ftz.f64: the reciprocal of the input's high 32 bits, truncated to 32 high bits
// (the H200 returns 0x3fe5555500000000 for 1.5). Subnormal inputs and results flush to zero.
double rcp_approx_ftz_f64(double a) {
  if (std::isnan(a)) return std::numeric_limits<double>::quiet_NaN();
  if (std::fpclassify(a) == FP_SUBNORMAL) a = std::copysign(0.0, a);
  const auto high_word = [](double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    bits &= 0xffffffff00000000ull;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  };
  double r = high_word(1.0 / high_word(a));
  if (std::fpclassify(r) == FP_SUBNORMAL) r = std::copysign(0.0, r);
  return r;
}
template <typename T>
T lg2(T a) {
  return std::log2(a);
}
template <typename T>
T ex2(T a) {
  return std::exp2(a);
}
template <typename T>
T tanh_op(T a) {
  return std::tanh(a);
}
template <typename T>
T copysign_op(T a, T b) {
  return std::copysign(b, a);
}

// PTX min/max: a NaN operand yields the other; -0.0 counts as less than +0.0.
template <typename T>
T min_op(T a, T b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
template <typename T>
T max_op(T a, T b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
template <typename T>
T min_nan(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  return min_op(a, b);
}
template <typename T>
T max_nan(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  return max_op(a, b);
}

// fma.rn.f32 without modifiers, the inner loop of most kernels: the hardware FMA instruction
// when the host has one (std::fma is otherwise a call into libm).
__attribute__((target("fma"))) void fma_f32_hardware(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t *a = x.reg(o[1]), *b = x.reg(o[2]), *c = x.reg(o[3]);
  if (mask == 0xffffffffu) {
    for (uint32_t l = 0; l < 32; ++l) {
      float r = __builtin_fmaf(get<float>(a[l]), get<float>(b[l]), get<float>(c[l]));
      d[l] = r != r ? kCanonicalNanF32 : std::bit_cast<uint32_t>(r);
    }
    return;
  }
  for (uint32_t m = mask; m != 0; m &= m - 1) {
    uint32_t l = static_cast<uint32_t>(__builtin_ctz(m));
    d[l] = std::bit_cast<uint32_t>(
        canonical_nan_f32(__builtin_fmaf(get<float>(a[l]), get<float>(b[l]), get<float>(c[l]))));
  }
}

template <typename T>
Handler select(const ptx::Instruction& in, int& sources) {
  bool approx = in.has_modifier("approx");
  bool nan = in.has_modifier("NaN");
  sources = 2;
  switch (in.opcode) {
    case Opcode::Add:
      return &fp_op<T, 2, add<T>>;
    case Opcode::Sub:
      return &fp_op<T, 2, sub<T>>;
    case Opcode::Mul:
      return &fp_op<T, 2, mul<T>>;
    case Opcode::Fma:
    case Opcode::Mad:
      sources = 3;
      return &fp_op<T, 3, fma_op<T>>;
    case Opcode::Div:
      return &fp_op<T, 2, div<T>>;
    case Opcode::Min:
      return nan ? &fp_op<T, 2, min_nan<T>> : &fp_op<T, 2, min_op<T>>;
    case Opcode::Max:
      return nan ? &fp_op<T, 2, max_nan<T>> : &fp_op<T, 2, max_op<T>>;
    case Opcode::Copysign:
      return &fp_op<T, 2, copysign_op<T>, false>;
    default:
      break;
  }
  sources = 1;
  switch (in.opcode) {
    case Opcode::Abs:
      return &fp_op<T, 1, abs_op<T>>;
    case Opcode::Neg:
      return &fp_op<T, 1, neg<T>>;
    case Opcode::Rcp:
      if constexpr (std::is_same_v<T, double>) {
        if (approx) return &fp_op<double, 1, rcp_approx_ftz_f64>;
      }
      return &fp_op<T, 1, rcp<T>>;
    case Opcode::Sqrt:
      return &fp_op<T, 1, sqrt_op<T>>;
    case Opcode::Rsqrt:
      return approx ? &fp_op<T, 1, rsqrt<T>> : nullptr;
    case Opcode::Sin:
      return approx ? &fp_op<T, 1, sin_op<T>> : nullptr;
    case Opcode::Cos:
      return approx ? &fp_op<T, 1, cos_op<T>> : nullptr;
    case Opcode::Lg2:
      return approx ? &fp_op<T, 1, lg2<T>> : nullptr;
    case Opcode::Ex2:
      return approx ? &fp_op<T, 1, ex2<T>> : nullptr;
    case Opcode::Tanh:
      return approx ? &fp_op<T, 1, tanh_op<T>> : nullptr;
    default:
      return nullptr;
  }
}

}  // namespace

bool decode_float(Decoder& d, const ptx::Instruction& in, Inst& out) {
  Type t = in.type();
  if (t != Type::F32 && t != Type::F64) return false;
  if (in.has_modifier("xorsign") || in.has_modifier("relu") || in.has_modifier("oob")) {
    return false;
  }
  int sources = 0;
  Handler fn = t == Type::F32 ? select<float>(in, sources) : select<double>(in, sources);
  if (fn == nullptr || in.operands.size() != static_cast<size_t>(sources + 1)) return false;
  out.fn = fn;
  out.klass = t == Type::F32 ? InstClass::Fp32 : InstClass::Other;
  out.mode = rounding_from_modifiers(in);
  if (in.has_modifier("ftz")) out.flags |= kFtz;
  if (in.has_modifier("sat")) out.flags |= kSat;
  bool plain_fma = (in.opcode == Opcode::Fma || in.opcode == Opcode::Mad) && t == Type::F32 &&
                   out.mode == kRoundNearest && out.flags == 0;
  if (plain_fma && __builtin_cpu_supports("fma")) out.fn = &fma_f32_hardware;
  for (const ptx::Operand& op : in.operands) d.push(d.value(op, t));
  return true;
}

}  // namespace kiln::sim
