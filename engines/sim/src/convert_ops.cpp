// cvt between every integer and floating-point type (f64, f32, f16, bf16, tf32, e4m3, e5m2 and
// the packed x2 forms), with the PTX rounding modes (.rn .rz .rm .rp for floats; .rni .rzi
// .rmi .rpi for integers), .ftz, .sat, .relu and .satfinite. Float-to-integer conversions
// saturate and send NaN to 0, as PTX specifies.
#include <cmath>
#include <limits>

#include "decoder.h"
#include "float_util.h"
#include "half.h"
#include "lane_ops.h"

namespace kiln::sim {

namespace {

using ptx::Type;

enum : uint8_t { kFtz = 1, kSat = 2, kRelu = 4, kSatFinite = 8, kIntRound = 16 };

bool is_small_float(Type t) {
  return t == Type::F16 || t == Type::BF16 || t == Type::E4M3 || t == Type::E5M2 || t == Type::TF32;
}

SmallFloat format_of(Type t) {
  switch (t) {
    case Type::F16:
    case Type::F16x2:
      return kF16;
    case Type::BF16:
    case Type::BF16x2:
      return kBF16;
    case Type::E4M3:
    case Type::E4M3x2:
      return kE4M3;
    case Type::E5M2:
    case Type::E5M2x2:
      return kE5M2;
    default:
      return kTF32;
  }
}

double round_integral(double v, uint8_t mode) {
  switch (mode) {
    case kRoundZero:
      return std::trunc(v);
    case kRoundDown:
      return std::floor(v);
    case kRoundUp:
      return std::ceil(v);
    default: {
      double r = std::floor(v);
      double diff = v - r;
      if (diff > 0.5 || (diff == 0.5 && std::fmod(r, 2.0) != 0)) r += 1;
      return std::copysign(r, v);  // -0.4 rounds to -0.0 (an H200 keeps the sign)
    }
  }
}

// Source value: exact for every source type (integers kept as integers).
struct Value {
  bool is_float = false;
  double f = 0;
  int64_t i = 0;
  uint64_t u = 0;
  bool is_signed = false;
};

Value read(uint64_t bits, Type t) {
  Value v;
  uint32_t width = ptx::type_bits(t);
  if (t == Type::F32) {
    v.is_float = true;
    v.f = std::bit_cast<float>(static_cast<uint32_t>(bits));
  } else if (t == Type::F64) {
    v.is_float = true;
    v.f = std::bit_cast<double>(bits);
  } else if (is_small_float(t)) {
    v.is_float = true;
    uint32_t mask = t == Type::TF32 ? 0xffffffffu : (1u << width) - 1;
    uint32_t b = static_cast<uint32_t>(bits) & mask;
    if (t == Type::TF32) b >>= 13;  // tf32 sits in the high 19 bits of a .b32
    v.f = small_to_double(b, format_of(t));
  } else {
    v.is_signed = ptx::is_signed_type(t);
    uint64_t m = width >= 64 ? ~0ull : (1ull << width) - 1;
    v.u = bits & m;
    if (v.is_signed && width < 64 && ((v.u >> (width - 1)) & 1)) {
      v.i = static_cast<int64_t>(v.u | ~m);
    } else {
      v.i = static_cast<int64_t>(v.u);
    }
  }
  return v;
}

uint64_t to_int(const Value& v, Type dst, uint8_t mode, uint8_t flags) {
  uint32_t width = ptx::type_bits(dst);
  bool dst_signed = ptx::is_signed_type(dst);
  uint64_t mask = width >= 64 ? ~0ull : (1ull << width) - 1;
  int64_t lo = dst_signed ? (width >= 64 ? std::numeric_limits<int64_t>::min()
                                         : -(int64_t{1} << (width - 1)))
                          : 0;
  if (v.is_float) {
    // NaN: 0, except for 64-bit destinations, where an H200 writes 0x8000000000000000 for
    // both .s64 and .u64 (measured by kiln_sim_differential, 2026-11-29).
    if (std::isnan(v.f)) return width >= 64 ? 0x8000000000000000ull : 0;
    double r = round_integral(v.f, mode);
    if (dst_signed) {
      double hi =
          width >= 64 ? 9223372036854775807.0 : std::ldexp(1.0, static_cast<int>(width) - 1) - 1;
      if (r <= static_cast<double>(lo)) return static_cast<uint64_t>(lo) & mask;
      if (r >= hi)
        return static_cast<uint64_t>(width >= 64 ? std::numeric_limits<int64_t>::max()
                                                 : static_cast<int64_t>(hi)) &
               mask;
      return static_cast<uint64_t>(static_cast<int64_t>(r)) & mask;
    }
    if (r <= 0) return 0;
    double hi = width >= 64 ? 18446744073709551615.0 : std::ldexp(1.0, static_cast<int>(width)) - 1;
    if (r >= hi) return mask;
    return static_cast<uint64_t>(r) & mask;
  }
  if (!(flags & kSat)) return static_cast<uint64_t>(v.i) & mask;
  // Integer saturation.
  if (dst_signed) {
    int64_t hi =
        width >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (width - 1)) - 1;
    if (!v.is_signed && v.u > static_cast<uint64_t>(hi)) return static_cast<uint64_t>(hi) & mask;
    if (v.is_signed && v.i > hi) return static_cast<uint64_t>(hi) & mask;
    if (v.is_signed && v.i < lo) return static_cast<uint64_t>(lo) & mask;
    return static_cast<uint64_t>(v.i) & mask;
  }
  if (v.is_signed && v.i < 0) return 0;
  if (v.u > mask) return mask;
  return v.u & mask;
}

double float_of(const Value& v) {
  if (v.is_float) return v.f;
  return v.is_signed ? static_cast<double>(v.i) : static_cast<double>(v.u);
}

uint64_t to_float(const Value& v, Type dst, uint8_t mode, uint8_t flags) {
  if (dst == Type::F32 || dst == Type::F64) {
    double r;
    if (flags & kIntRound) {
      r = v.is_float && !std::isfinite(v.f) ? v.f : round_integral(float_of(v), mode);
    } else {
      r = float_of(v);
    }
    if (dst == Type::F32) {
      float out;
      if (!v.is_float) {
        RoundingScope rounding(mode);
        out = v.is_signed ? static_cast<float>(v.i) : static_cast<float>(v.u);
      } else {
        RoundingScope rounding((flags & kIntRound) ? uint8_t{kRoundNearest} : mode);
        volatile double in = r;  // keep the conversion inside the rounding scope
        out = static_cast<float>(in);
      }
      if (flags & kIntRound) out = canonical_nan_f32(static_cast<float>(r));
      if (flags & kFtz) out = flush_subnormal(out);
      if (flags & kSat) out = saturate(out);
      return std::bit_cast<uint32_t>(out);
    }
    if (!v.is_float) {
      RoundingScope rounding(mode);
      r = v.is_signed ? static_cast<double>(v.i) : static_cast<double>(v.u);
    }
    if (flags & kSat) r = saturate(r);
    return std::bit_cast<uint64_t>(r);
  }
  double x = float_of(v);
  if ((flags & kRelu) && !std::isnan(x) && x <= 0) x = 0;  // -0.0 too: .relu gives +0.0
  if (flags & kSat) x = saturate(x);
  uint32_t bits = double_to_small(x, format_of(dst), mode, (flags & kSatFinite) != 0);
  if (dst == Type::TF32) bits <<= 13;
  return bits;
}

uint64_t convert(uint64_t bits, Type src, Type dst, uint8_t mode, uint8_t flags) {
  Value v = read(bits, src);
  if (src == Type::F32 && (flags & kFtz)) {
    v.f = flush_subnormal(static_cast<float>(v.f));
  }
  if (ptx::is_float_type(dst)) return to_float(v, dst, mode, flags);
  return to_int(v, dst, mode, flags);
}

// ops: d, a. width = dst type, target = src type.
void cvt(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t* a = x.reg(o[1]);
  Type dst = static_cast<Type>(in.width), src = static_cast<Type>(in.target);
  for_lanes(mask, [&](uint32_t l) { d[l] = convert(a[l], src, dst, in.mode, in.flags); });
}

// Packed results: cvt.f16x2.f32 d, a, b puts cvt(a) in the upper half, cvt(b) in the lower.
void cvt_pack(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t *a = x.reg(o[1]), *b = x.reg(o[2]);
  Type dst = static_cast<Type>(in.width), src = static_cast<Type>(in.target);
  uint32_t half_bits = in.vec;
  for_lanes(mask, [&](uint32_t l) {
    uint64_t hi = convert(a[l], src, dst, in.mode, in.flags);
    uint64_t lo = convert(b[l], src, dst, in.mode, in.flags);
    d[l] = (hi << half_bits) | lo;
  });
}

// Packed sources: cvt.f16x2.e4m3x2 d, a converts both 8-bit halves of a.
void cvt_unpack(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t* a = x.reg(o[1]);
  Type dst = static_cast<Type>(in.width), src = static_cast<Type>(in.target);
  uint32_t src_bits = ptx::type_bits(src), dst_bits = ptx::type_bits(dst);
  for_lanes(mask, [&](uint32_t l) {
    uint64_t lo = convert(a[l] & ((1ull << src_bits) - 1), src, dst, in.mode, in.flags);
    uint64_t hi =
        convert((a[l] >> src_bits) & ((1ull << src_bits) - 1), src, dst, in.mode, in.flags);
    d[l] = (hi << dst_bits) | lo;
  });
}

// The common widenings, without the general machinery.
void cvt_u64_u32(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t* a = x.reg(o[1]);
  for_lanes(mask, [&](uint32_t l) { d[l] = static_cast<uint32_t>(a[l]); });
}
void cvt_s64_s32(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t* a = x.reg(o[1]);
  for_lanes(mask, [&](uint32_t l) {
    d[l] = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(a[l])));
  });
}
void cvt_f32_f16(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t* a = x.reg(o[1]);
  bool bf = in.target == static_cast<uint8_t>(Type::BF16);
  for_lanes(mask, [&](uint32_t l) {
    uint16_t h = static_cast<uint16_t>(a[l]);
    // f16 NaN: the canonical f32 NaN, as an H200 gives; bf16 is widened bit for bit.
    d[l] = bf ? (static_cast<uint64_t>(h) << 16)
              : std::bit_cast<uint32_t>(canonical_nan_f32(half_to_float(h)));
  });
}

Type element_of(Type t) {
  switch (t) {
    case Type::F16x2:
      return Type::F16;
    case Type::BF16x2:
      return Type::BF16;
    case Type::E4M3x2:
      return Type::E4M3;
    case Type::E5M2x2:
      return Type::E5M2;
    default:
      return t;
  }
}

}  // namespace

bool decode_convert(Decoder& d, const ptx::Instruction& in, Inst& out) {
  if (in.types.size() != 2) return false;
  Type dst = in.types[0], src = in.types[1];
  out.klass = (ptx::is_float_type(dst) && ptx::type_bits(dst) <= 16) ||
                      (ptx::is_float_type(src) && ptx::type_bits(src) <= 16)
                  ? InstClass::Fp16
                  : InstClass::Alu;
  out.mode = rounding_from_modifiers(in);
  for (const std::string& m : in.modifiers) {
    if (m == "rni" || m == "rzi" || m == "rmi" || m == "rpi") out.flags |= kIntRound;
  }
  if (in.has_modifier("ftz")) out.flags |= kFtz;
  if (in.has_modifier("sat")) out.flags |= kSat;
  if (in.has_modifier("relu")) out.flags |= kRelu;
  if (in.has_modifier("satfinite")) out.flags |= kSatFinite;
  if (ptx::type_bits(dst) == 0 || ptx::type_bits(src) == 0 || dst == Type::Pred) return false;
  for (Type t : {dst, src}) {
    if (t == Type::E2M1 || t == Type::E2M1x2 || t == Type::E2M3 || t == Type::E2M3x2 ||
        t == Type::E3M2 || t == Type::E3M2x2 || t == Type::UE8M0 || t == Type::UE8M0x2 ||
        t == Type::B128 || t == Type::U4 || t == Type::S4) {
      d.fail("cvt with ." + std::string(ptx::type_name(t)) + " is not supported yet");
      return false;
    }
  }
  bool packed_dst =
      dst == Type::F16x2 || dst == Type::BF16x2 || dst == Type::E4M3x2 || dst == Type::E5M2x2;
  bool packed_src = src == Type::E4M3x2 || src == Type::E5M2x2 || src == Type::F16x2;
  if (packed_dst && in.operands.size() == 3 && !packed_src) {
    out.width = static_cast<uint8_t>(element_of(dst));
    out.target = static_cast<uint32_t>(src);
    out.vec = static_cast<uint8_t>(ptx::type_bits(element_of(dst)));
    for (const ptx::Operand& op : in.operands) d.push(d.value(op, Type::B32));
    out.fn = &cvt_pack;
    return true;
  }
  if (in.operands.size() != 2) return false;
  d.push(d.value(in.operands[0], dst));
  d.push(d.value(in.operands[1], src));
  if (packed_dst && packed_src) {
    out.width = static_cast<uint8_t>(element_of(dst));
    out.target = static_cast<uint32_t>(element_of(src));
    out.fn = &cvt_unpack;
    return true;
  }
  if (packed_dst || packed_src) return false;
  out.width = static_cast<uint8_t>(dst);
  out.target = static_cast<uint32_t>(src);
  bool plain = out.flags == 0 && out.mode == kRoundNearest;
  if (plain && dst == Type::U64 && (src == Type::U32 || src == Type::B32)) {
    out.fn = &cvt_u64_u32;
  } else if (plain && dst == Type::S64 && src == Type::S32) {
    out.fn = &cvt_s64_s32;
  } else if (plain && dst == Type::F32 && (src == Type::F16 || src == Type::BF16)) {
    out.fn = &cvt_f32_f16;
  } else {
    out.fn = &cvt;
  }
  return true;
}

}  // namespace kiln::sim
