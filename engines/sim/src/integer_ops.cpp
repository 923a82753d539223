// Integer and bit instructions: add/sub/mul/mad (lo, hi, wide), div/rem, abs/neg/min/max,
// logic, shifts, bit-field and bit-count instructions, prmt, lop3, shf, sad, mul24/mad24.
#include <algorithm>
#include <bit>
#include <limits>
#include <type_traits>

#include "decoder.h"
#include "lane_ops.h"

namespace kiln::sim {

namespace {

using ptx::Opcode;
using ptx::Type;
__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

template <typename T>
using U = std::make_unsigned_t<T>;

template <typename T>
struct Wider;
template <>
struct Wider<int16_t> {
  using type = int32_t;
};
template <>
struct Wider<uint16_t> {
  using type = uint32_t;
};
template <>
struct Wider<int32_t> {
  using type = int64_t;
};
template <>
struct Wider<uint32_t> {
  using type = uint64_t;
};
template <>
struct Wider<int64_t> {
  using type = i128;
};
template <>
struct Wider<uint64_t> {
  using type = u128;
};
template <typename T>
using W = typename Wider<T>::type;

template <typename T>
constexpr unsigned kBits = sizeof(T) * 8;

template <typename T>
T wrap_add(T a, T b) {
  return static_cast<T>(static_cast<U<T>>(a) + static_cast<U<T>>(b));
}
template <typename T>
T wrap_sub(T a, T b) {
  return static_cast<T>(static_cast<U<T>>(a) - static_cast<U<T>>(b));
}
template <typename T>
T wrap_mul(T a, T b) {
  using P = std::conditional_t<(sizeof(T) < 4), uint32_t, U<T>>;
  return static_cast<T>(static_cast<P>(static_cast<U<T>>(a)) *
                        static_cast<P>(static_cast<U<T>>(b)));
}
template <typename T>
T mul_hi(T a, T b) {
  return static_cast<T>((static_cast<W<T>>(a) * static_cast<W<T>>(b)) >> kBits<T>);
}
template <typename T>
W<T> mul_wide(T a, T b) {
  return static_cast<W<T>>(a) * static_cast<W<T>>(b);
}
template <typename T>
T sat_add(T a, T b) {
  int64_t r = static_cast<int64_t>(a) + static_cast<int64_t>(b);
  return static_cast<T>(
      std::clamp<int64_t>(r, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
}
template <typename T>
T sat_sub(T a, T b) {
  int64_t r = static_cast<int64_t>(a) - static_cast<int64_t>(b);
  return static_cast<T>(
      std::clamp<int64_t>(r, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
}
template <typename T>
T div_op(T a, T b) {
  if (b == 0)
    return static_cast<T>(~U<T>(0));  // what the hardware returns; PTX leaves it undefined
  if constexpr (std::is_signed_v<T>) {
    if (a == std::numeric_limits<T>::min() && b == -1) return a;
  }
  return static_cast<T>(a / b);
}
template <typename T>
T rem_op(T a, T b) {
  if (b == 0) return a;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
  }
  return static_cast<T>(a % b);
}
template <typename T>
T abs_op(T a) {
  return a < 0 ? static_cast<T>(U<T>(0) - static_cast<U<T>>(a)) : a;
}
template <typename T>
T shl_op(T a, uint32_t s) {
  return s >= kBits<T> ? T(0) : static_cast<T>(static_cast<U<T>>(a) << s);
}
template <typename T>
T shr_op(T a, uint32_t s) {
  if constexpr (std::is_signed_v<T>) {
    return static_cast<T>(a >> std::min<uint32_t>(s, kBits<T> - 1));
  } else {
    return s >= kBits<T> ? T(0) : static_cast<T>(a >> s);
  }
}
template <typename T>
T bfe_op(T a, uint32_t pos, uint32_t len) {
  pos &= 0xff;
  len &= 0xff;
  constexpr uint32_t n = kBits<T>;
  bool sbit = false;
  if constexpr (std::is_signed_v<T>) {
    uint32_t top = std::min(n - 1, pos + len - 1);
    sbit = len == 0 ? false : ((static_cast<U<T>>(a) >> top) & 1) != 0;
  }
  U<T> out = 0;
  for (uint32_t i = 0; i < n; ++i) {
    bool bit = i < len && pos + i < n ? ((static_cast<U<T>>(a) >> (pos + i)) & 1) != 0 : sbit;
    if (i >= len) bit = sbit;
    if (bit) out |= U<T>(1) << i;
  }
  return static_cast<T>(out);
}
template <typename T>
T bfi_op(T f, T b, uint32_t pos, uint32_t len) {
  pos &= 0xff;
  len &= 0xff;
  U<T> out = static_cast<U<T>>(b);
  for (uint32_t i = 0; i < len && pos + i < kBits<T>; ++i) {
    U<T> bit = U<T>(1) << (pos + i);
    out = (out & ~bit) | (((static_cast<U<T>>(f) >> i) & 1) ? bit : U<T>(0));
  }
  return static_cast<T>(out);
}
template <typename T>
uint32_t bfind_op(T a, bool shiftamt) {
  U<T> v = static_cast<U<T>>(a);
  if constexpr (std::is_signed_v<T>) {
    if (a < 0) v = ~v;
  }
  if (v == 0) return 0xffffffffu;
  uint32_t msb = kBits<T> - 1 - static_cast<uint32_t>(std::countl_zero(v));
  return shiftamt ? kBits<T> - 1 - msb : msb;
}

// Handler families, one instantiation per integer type.
template <typename T>
struct AddF {
  static constexpr Handler fn = &binary_op<T, T, wrap_add<T>>;
};
template <typename T>
struct SubF {
  static constexpr Handler fn = &binary_op<T, T, wrap_sub<T>>;
};
template <typename T>
struct MulLoF {
  static constexpr Handler fn = &binary_op<T, T, wrap_mul<T>>;
};
template <typename T>
struct MulHiF {
  static constexpr Handler fn = &binary_op<T, T, mul_hi<T>>;
};
template <typename T>
struct MulWideF {
  static constexpr Handler fn = [] {
    if constexpr (sizeof(T) == 8) {
      return Handler(nullptr);
    } else {
      return Handler(&binary_op<T, W<T>, mul_wide<T>>);
    }
  }();
};
template <typename T>
struct MadLoF {
  static constexpr Handler fn =
      &ternary_op<T, T, [](T a, T b, T c) { return wrap_add<T>(wrap_mul<T>(a, b), c); }>;
};
template <typename T>
struct MadHiF {
  static constexpr Handler fn =
      &ternary_op<T, T, [](T a, T b, T c) { return wrap_add<T>(mul_hi<T>(a, b), c); }>;
};
template <typename T>
struct MadWideF {
  static void run(Exec& x, const Inst& in, uint32_t mask) {
    if constexpr (sizeof(T) < 8) {
      const uint32_t* o = x.ops(in);
      uint64_t* d = x.reg(o[0]);
      const uint64_t *a = x.reg(o[1]), *b = x.reg(o[2]), *c = x.reg(o[3]);
      for_lanes(mask, [&](uint32_t l) {
        W<T> r = static_cast<W<T>>(static_cast<U<W<T>>>(mul_wide<T>(get<T>(a[l]), get<T>(b[l]))) +
                                   static_cast<U<W<T>>>(get<W<T>>(c[l])));
        d[l] = put<W<T>>(r);
      });
    }
  }
  static constexpr Handler fn = sizeof(T) == 8 ? nullptr : &run;
};
template <typename T>
struct DivF {
  static constexpr Handler fn = &binary_op<T, T, div_op<T>>;
};
template <typename T>
struct RemF {
  static constexpr Handler fn = &binary_op<T, T, rem_op<T>>;
};
template <typename T>
struct MinF {
  static constexpr Handler fn = &binary_op<T, T, [](T a, T b) { return std::min(a, b); }>;
};
template <typename T>
struct MaxF {
  static constexpr Handler fn = &binary_op<T, T, [](T a, T b) { return std::max(a, b); }>;
};
template <typename T>
struct AbsF {
  static constexpr Handler fn = &unary_op<T, T, abs_op<T>>;
};
template <typename T>
struct NegF {
  static constexpr Handler fn = &unary_op<T, T, [](T a) { return wrap_sub<T>(T(0), a); }>;
};
template <typename T>
struct AndF {
  static constexpr Handler fn = &binary_op<T, T, [](T a, T b) { return T(a & b); }>;
};
template <typename T>
struct OrF {
  static constexpr Handler fn = &binary_op<T, T, [](T a, T b) { return T(a | b); }>;
};
template <typename T>
struct XorF {
  static constexpr Handler fn = &binary_op<T, T, [](T a, T b) { return T(a ^ b); }>;
};
template <typename T>
struct NotF {
  static constexpr Handler fn = &unary_op<T, T, [](T a) { return T(~a); }>;
};
template <typename T>
struct CnotF {
  static constexpr Handler fn = &unary_op<T, T, [](T a) { return T(a == 0 ? 1 : 0); }>;
};
template <typename T>
struct PopcF {
  static constexpr Handler fn = &unary_op<T, uint32_t, [](T a) {
    return static_cast<uint32_t>(std::popcount(static_cast<U<T>>(a)));
  }>;
};
template <typename T>
struct ClzF {
  static constexpr Handler fn = &unary_op<T, uint32_t, [](T a) {
    return static_cast<uint32_t>(std::countl_zero(static_cast<U<T>>(a)));
  }>;
};
template <typename T>
struct BrevF {
  static constexpr Handler fn = &unary_op<T, T, [](T a) {
    U<T> v = static_cast<U<T>>(a), r = 0;
    for (unsigned i = 0; i < kBits<T>; ++i) r |= ((v >> i) & 1) << (kBits<T> - 1 - i);
    return static_cast<T>(r);
  }>;
};

template <typename T>
void shift(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t *a = x.reg(o[1]), *b = x.reg(o[2]);
  if (in.mode == 0) {
    for_lanes(mask,
              [&](uint32_t l) { d[l] = put<T>(shl_op<T>(get<T>(a[l]), get<uint32_t>(b[l]))); });
  } else {
    for_lanes(mask,
              [&](uint32_t l) { d[l] = put<T>(shr_op<T>(get<T>(a[l]), get<uint32_t>(b[l]))); });
  }
}
template <typename T>
struct ShiftF {
  static constexpr Handler fn = &shift<T>;
};

template <typename T>
void bfe(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t *a = x.reg(o[1]), *b = x.reg(o[2]), *c = x.reg(o[3]);
  for_lanes(mask, [&](uint32_t l) {
    d[l] = put<T>(bfe_op<T>(get<T>(a[l]), get<uint32_t>(b[l]), get<uint32_t>(c[l])));
  });
}
template <typename T>
struct BfeF {
  static constexpr Handler fn = &bfe<T>;
};

template <typename T>
void bfi(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t *a = x.reg(o[1]), *b = x.reg(o[2]), *c = x.reg(o[3]), *e = x.reg(o[4]);
  for_lanes(mask, [&](uint32_t l) {
    d[l] = put<T>(bfi_op<T>(get<T>(a[l]), get<T>(b[l]), get<uint32_t>(c[l]), get<uint32_t>(e[l])));
  });
}
template <typename T>
struct BfiF {
  static constexpr Handler fn = &bfi<T>;
};

template <typename T>
void bfind(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t* a = x.reg(o[1]);
  for_lanes(mask, [&](uint32_t l) { d[l] = bfind_op<T>(get<T>(a[l]), in.flags != 0); });
}
template <typename T>
struct BfindF {
  static constexpr Handler fn = &bfind<T>;
};

template <typename T>
void sad(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t *a = x.reg(o[1]), *b = x.reg(o[2]), *c = x.reg(o[3]);
  for_lanes(mask, [&](uint32_t l) {
    T p = get<T>(a[l]), q = get<T>(b[l]);
    T diff = p < q ? wrap_sub<T>(q, p) : wrap_sub<T>(p, q);
    d[l] = put<T>(wrap_add<T>(get<T>(c[l]), diff));
  });
}
template <typename T>
struct SadF {
  static constexpr Handler fn = &sad<T>;
};

template <typename T>
void sat_addsub(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t *a = x.reg(o[1]), *b = x.reg(o[2]);
  for_lanes(mask, [&](uint32_t l) {
    T p = get<T>(a[l]), q = get<T>(b[l]);
    d[l] = put<T>(in.mode == 0 ? sat_add<T>(p, q) : sat_sub<T>(p, q));
  });
}

void mul24(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t *a = x.reg(o[1]), *b = x.reg(o[2]);
  const uint64_t* c = in.nops > 3 ? x.reg(o[3]) : nullptr;
  bool is_signed = in.flags & 1, hi = in.flags & 2;
  for_lanes(mask, [&](uint32_t l) {
    int64_t p, q;
    if (is_signed) {
      p = static_cast<int32_t>(static_cast<uint32_t>(a[l]) << 8) >> 8;
      q = static_cast<int32_t>(static_cast<uint32_t>(b[l]) << 8) >> 8;
    } else {
      p = static_cast<int64_t>(a[l] & 0xffffff);
      q = static_cast<int64_t>(b[l] & 0xffffff);
    }
    uint64_t prod = static_cast<uint64_t>(p * q);
    uint32_t r = hi ? static_cast<uint32_t>(prod >> 16) : static_cast<uint32_t>(prod);
    if (c) r += static_cast<uint32_t>(c[l]);
    d[l] = r;
  });
}

template <template <typename> class F>
Handler pick(Type t) {
  switch (t) {
    case Type::S16:
      return F<int16_t>::fn;
    case Type::U16:
    case Type::B16:
      return F<uint16_t>::fn;
    case Type::S32:
      return F<int32_t>::fn;
    case Type::U32:
    case Type::B32:
      return F<uint32_t>::fn;
    case Type::S64:
      return F<int64_t>::fn;
    case Type::U64:
    case Type::B64:
      return F<uint64_t>::fn;
    default:
      return nullptr;
  }
}

Type wide_type(Type t) {
  switch (t) {
    case Type::S16:
      return Type::S32;
    case Type::U16:
      return Type::U32;
    case Type::S32:
      return Type::S64;
    case Type::U32:
      return Type::U64;
    default:
      return t;
  }
}

}  // namespace

bool decode_integer(Decoder& d, const ptx::Instruction& in, Inst& out) {
  Type t = in.type();
  out.klass = InstClass::Alu;
  Handler fn = nullptr;
  size_t expected = 3;
  std::vector<Type> types;  // per operand, for immediates
  bool wide = in.has_modifier("wide");
  bool hi = in.has_modifier("hi");
  switch (in.opcode) {
    case Opcode::Add:
    case Opcode::Sub:
      if (in.has_modifier("cc")) return decode_carry(d, in, out);
      if (in.has_modifier("sat")) {
        if (t != Type::S32) return false;
        fn = &sat_addsub<int32_t>;
        out.mode = in.opcode == Opcode::Add ? 0 : 1;
      } else {
        fn = in.opcode == Opcode::Add ? pick<AddF>(t) : pick<SubF>(t);
      }
      break;
    case Opcode::Mul:
      fn = wide ? pick<MulWideF>(t) : hi ? pick<MulHiF>(t) : pick<MulLoF>(t);
      break;
    case Opcode::Addc:
    case Opcode::Subc:
    case Opcode::Madc:
      return decode_carry(d, in, out);
    case Opcode::Dp4a:
    case Opcode::Dp2a:
      return decode_dot(d, in, out);
    case Opcode::Mad:
      if (in.has_modifier("cc")) return decode_carry(d, in, out);
      if (in.has_modifier("sat")) return false;
      fn = wide ? pick<MadWideF>(t) : hi ? pick<MadHiF>(t) : pick<MadLoF>(t);
      expected = 4;
      break;
    case Opcode::Mul24:
    case Opcode::Mad24:
      if (t != Type::S32 && t != Type::U32) return false;
      fn = &mul24;
      out.flags = static_cast<uint8_t>((t == Type::S32 ? 1 : 0) | (hi ? 2 : 0));
      expected = in.opcode == Opcode::Mad24 ? 4 : 3;
      break;
    case Opcode::Div:
      fn = pick<DivF>(t);
      break;
    case Opcode::Rem:
      fn = pick<RemF>(t);
      break;
    case Opcode::Min:
      fn = in.has_modifier("relu") ? nullptr : pick<MinF>(t);
      break;
    case Opcode::Max:
      fn = in.has_modifier("relu") ? nullptr : pick<MaxF>(t);
      break;
    case Opcode::Abs:
      fn = pick<AbsF>(t);
      expected = 2;
      break;
    case Opcode::Neg:
      fn = pick<NegF>(t);
      expected = 2;
      break;
    case Opcode::And:
      fn = pick<AndF>(t);
      break;
    case Opcode::Or:
      fn = pick<OrF>(t);
      break;
    case Opcode::Xor:
      fn = pick<XorF>(t);
      break;
    case Opcode::Not:
      fn = pick<NotF>(t);
      expected = 2;
      break;
    case Opcode::Cnot:
      fn = pick<CnotF>(t);
      expected = 2;
      break;
    case Opcode::Popc:
      fn = pick<PopcF>(t);
      expected = 2;
      break;
    case Opcode::Clz:
      fn = pick<ClzF>(t);
      expected = 2;
      break;
    case Opcode::Brev:
      fn = pick<BrevF>(t);
      expected = 2;
      break;
    case Opcode::Bfind:
      fn = pick<BfindF>(t);
      out.flags = in.has_modifier("shiftamt") ? 1 : 0;
      expected = 2;
      break;
    case Opcode::Shl:
    case Opcode::Shr:
      fn = pick<ShiftF>(t);
      out.mode = in.opcode == Opcode::Shl ? 0 : 1;
      types = {t, t, Type::U32};
      break;
    case Opcode::Bfe:
      fn = pick<BfeF>(t);
      expected = 4;
      types = {t, t, Type::U32, Type::U32};
      break;
    case Opcode::Bfi:
      fn = pick<BfiF>(t);
      expected = 5;
      types = {t, t, t, Type::U32, Type::U32};
      break;
    case Opcode::Sad:
      fn = pick<SadF>(t);
      expected = 4;
      break;
    case Opcode::Prmt:
    case Opcode::Lop3:
    case Opcode::Shf:
    case Opcode::Szext:
    case Opcode::Bmsk:
      return decode_bit(d, in, out);
    default:
      return false;
  }
  if (fn == nullptr || in.operands.size() != expected) return false;
  for (size_t i = 0; i < in.operands.size(); ++i) {
    Type ot = i < types.size() ? types[i] : (i == 0 && wide ? wide_type(t) : t);
    if (in.opcode == Opcode::Mad && wide && i == 3) ot = wide_type(t);
    d.push(d.value(in.operands[i], ot));
  }
  out.fn = fn;
  return true;
}

}  // namespace kiln::sim
