// Comparisons and selection: setp (every comparison, ordered and unordered, with the .and/.or/
// .xor combination and the p|q pair), set, selp and slct. Half types compare through float.
#include <cmath>
#include <string_view>

#include "decoder.h"
#include "half.h"
#include "lane_ops.h"

namespace kiln::sim {

namespace {

using ptx::Opcode;
using ptx::Type;

enum Cmp : uint8_t { Eq, Ne, Lt, Le, Gt, Ge, Equ, Neu, Ltu, Leu, Gtu, Geu, Num, Nan };

template <Cmp C, typename T>
inline bool compare(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    bool unordered = std::isnan(a) || std::isnan(b);
    switch (C) {
      case Eq:
        return !unordered && a == b;
      case Ne:
        return !unordered && a != b;
      case Lt:
        return !unordered && a < b;
      case Le:
        return !unordered && a <= b;
      case Gt:
        return !unordered && a > b;
      case Ge:
        return !unordered && a >= b;
      case Equ:
        return unordered || a == b;
      case Neu:
        return unordered || a != b;
      case Ltu:
        return unordered || a < b;
      case Leu:
        return unordered || a <= b;
      case Gtu:
        return unordered || a > b;
      case Geu:
        return unordered || a >= b;
      case Num:
        return !unordered;
      case Nan:
        return unordered;
    }
  } else {
    switch (C) {
      case Eq:
        return a == b;
      case Ne:
        return a != b;
      case Lt:
        return a < b;
      case Le:
        return a <= b;
      case Gt:
        return a > b;
      case Ge:
        return a >= b;
      default:
        return false;
    }
  }
  return false;
}

// Stands for f16/bf16 (and x2) operands, compared as float.
struct HalfTag {};

// Value of a register as T; half types widen to float. `half` selects the upper half of x2.
template <typename T>
inline auto as_value(uint64_t bits, Type t, int half) {
  if constexpr (std::is_same_v<T, HalfTag>) {
    uint16_t h = static_cast<uint16_t>(bits >> (16 * half));
    return (t == Type::BF16 || t == Type::BF16x2) ? bf16_to_float(h) : half_to_float(h);
  } else {
    return get<T>(bits);
  }
}

inline uint32_t combine(uint32_t value, uint32_t c, uint8_t op) {
  switch (op) {
    case 1:
      return value & c;
    case 2:
      return value | c;
    case 3:
      return value ^ c;
    default:
      return value;
  }
}

// ops: p, q (or UINT32_MAX), a, b, c (predicate, or UINT32_MAX).
template <typename T, Cmp C>
void setp(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  const uint64_t *a = x.reg(o[2]), *b = x.reg(o[3]);
  Type t = static_cast<Type>(in.width);
  uint32_t result = 0, result_hi = 0;
  for_lanes(mask, [&](uint32_t l) {
    if (compare<C>(as_value<T>(a[l], t, 0), as_value<T>(b[l], t, 0))) result |= 1u << l;
    if constexpr (std::is_same_v<T, HalfTag>) {
      if (compare<C>(as_value<T>(a[l], t, 1), as_value<T>(b[l], t, 1))) result_hi |= 1u << l;
    }
  });
  uint32_t c = o[4] == UINT32_MAX ? 0 : x.pred_mask(o[4]);
  if (in.flags) {  // f16x2/bf16x2: p gets the low half, q the high half
    x.set_pred(o[0], mask, combine(result, c, in.mode));
    if (o[1] != UINT32_MAX) x.set_pred(o[1], mask, combine(result_hi, c, in.mode));
    return;
  }
  x.set_pred(o[0], mask, combine(result, c, in.mode));
  if (o[1] != UINT32_MAX) x.set_pred(o[1], mask, combine(~result, c, in.mode));
}

// set.CmpOp.dtype.stype d, a, b: all ones (integer d) or 1.0f (f32 d) when true.
template <typename T, Cmp C>
void set(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t *a = x.reg(o[1]), *b = x.reg(o[2]);
  Type t = static_cast<Type>(in.width);
  uint64_t yes = in.flags ? 0x3f800000u : 0xffffffffu;
  for_lanes(mask, [&](uint32_t l) {
    d[l] = compare<C>(as_value<T>(a[l], t, 0), as_value<T>(b[l], t, 0)) ? yes : 0;
  });
}

void selp(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t *a = x.reg(o[1]), *b = x.reg(o[2]);
  uint32_t c = x.pred_mask(o[3]);
  for_lanes(mask, [&](uint32_t l) { d[l] = ((c >> l) & 1) ? a[l] : b[l]; });
}

template <typename C>
void slct(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t *a = x.reg(o[1]), *b = x.reg(o[2]), *c = x.reg(o[3]);
  for_lanes(mask, [&](uint32_t l) { d[l] = get<C>(c[l]) >= C(0) ? a[l] : b[l]; });
}

template <template <typename, Cmp> class H, typename T>
Handler by_cmp(Cmp c) {
  switch (c) {
    case Eq:
      return &H<T, Eq>::run;
    case Ne:
      return &H<T, Ne>::run;
    case Lt:
      return &H<T, Lt>::run;
    case Le:
      return &H<T, Le>::run;
    case Gt:
      return &H<T, Gt>::run;
    case Ge:
      return &H<T, Ge>::run;
    case Equ:
      return &H<T, Equ>::run;
    case Neu:
      return &H<T, Neu>::run;
    case Ltu:
      return &H<T, Ltu>::run;
    case Leu:
      return &H<T, Leu>::run;
    case Gtu:
      return &H<T, Gtu>::run;
    case Geu:
      return &H<T, Geu>::run;
    case Num:
      return &H<T, Num>::run;
    case Nan:
      return &H<T, Nan>::run;
  }
  return nullptr;
}
template <typename T, Cmp C>
struct SetpH {
  static void run(Exec& x, const Inst& i, uint32_t m) { setp<T, C>(x, i, m); }
};
template <typename T, Cmp C>
struct SetH {
  static void run(Exec& x, const Inst& i, uint32_t m) { set<T, C>(x, i, m); }
};

template <template <typename, Cmp> class H>
Handler by_type(Type t, Cmp c) {
  bool is_float = ptx::is_float_type(t);
  if (!is_float && c >= Equ) return nullptr;
  switch (t) {
    case Type::S16:
      return by_cmp<H, int16_t>(c);
    case Type::U16:
    case Type::B16:
      return by_cmp<H, uint16_t>(c);
    case Type::S32:
      return by_cmp<H, int32_t>(c);
    case Type::U32:
    case Type::B32:
      return by_cmp<H, uint32_t>(c);
    case Type::S64:
      return by_cmp<H, int64_t>(c);
    case Type::U64:
    case Type::B64:
      return by_cmp<H, uint64_t>(c);
    case Type::F32:
      return by_cmp<H, float>(c);
    case Type::F64:
      return by_cmp<H, double>(c);
    case Type::F16:
    case Type::F16x2:
    case Type::BF16:
    case Type::BF16x2:
      return by_cmp<H, HalfTag>(c);
    default:
      return nullptr;
  }
}

bool parse_cmp(const ptx::Instruction& in, Cmp& out, bool& unsigned_form) {
  static constexpr std::pair<std::string_view, Cmp> kNames[] = {
      {"eq", Eq},   {"ne", Ne},   {"lt", Lt},   {"le", Le},   {"gt", Gt},   {"ge", Ge},
      {"lo", Lt},   {"ls", Le},   {"hi", Gt},   {"hs", Ge},   {"equ", Equ}, {"neu", Neu},
      {"ltu", Ltu}, {"leu", Leu}, {"gtu", Gtu}, {"geu", Geu}, {"num", Num}, {"nan", Nan}};
  for (const std::string& m : in.modifiers) {
    for (const auto& [name, cmp] : kNames) {
      if (m == name) {
        out = cmp;
        unsigned_form = name == "lo" || name == "ls" || name == "hi" || name == "hs";
        return true;
      }
    }
  }
  return false;
}

Type unsigned_of(Type t) {
  switch (t) {
    case Type::S16:
      return Type::U16;
    case Type::S32:
      return Type::U32;
    case Type::S64:
      return Type::U64;
    default:
      return t;
  }
}

}  // namespace

bool decode_compare(Decoder& d, const ptx::Instruction& in, Inst& out) {
  out.klass = InstClass::Alu;
  Type t = in.type();
  if (in.opcode == Opcode::Selp) {
    if (in.operands.size() != 4) return false;
    for (size_t i = 0; i < 3; ++i) d.push(d.value(in.operands[i], t));
    d.push(d.predicate(in.operands[3]));
    out.fn = &selp;
    return true;
  }
  if (in.opcode == Opcode::Slct) {
    if (in.operands.size() != 4 || in.types.size() != 2) return false;
    for (size_t i = 0; i < 3; ++i) d.push(d.value(in.operands[i], in.types[0]));
    d.push(d.value(in.operands[3], t));
    out.fn = t == Type::F32 ? &slct<float> : &slct<int32_t>;
    return true;
  }
  Cmp cmp{};
  bool unsigned_form = false;
  if (!parse_cmp(in, cmp, unsigned_form)) return false;
  if (in.has_modifier("ftz") && t != Type::F32) {
    // ftz on half types changes nothing for comparisons of normal values; accept.
  }
  Type compare_type = unsigned_form ? unsigned_of(t) : t;
  out.width = static_cast<uint8_t>(t);
  if (t == Type::F16 || t == Type::BF16 || t == Type::F16x2 || t == Type::BF16x2) {
    out.klass = InstClass::Fp16;
  }
  if (in.opcode == Opcode::Set) {
    if (in.types.size() != 2 || in.operands.size() != 3) return false;
    Type dtype = in.types[0];
    out.flags = dtype == Type::F32 ? 1 : 0;
    out.fn = by_type<SetH>(compare_type, cmp);
    if (out.fn == nullptr || (ptx::type_bits(t) == 16 && ptx::is_float_type(t))) return false;
    d.push(d.value(in.operands[0], dtype));
    d.push(d.value(in.operands[1], t));
    d.push(d.value(in.operands[2], t));
    return true;
  }
  // setp
  uint8_t combine_op = in.has_modifier("and")   ? 1
                       : in.has_modifier("or")  ? 2
                       : in.has_modifier("xor") ? 3
                                                : 0;
  size_t sources = combine_op ? 3 : 2;
  if (in.operands.size() != sources + 1) return false;
  out.mode = combine_op;
  out.flags = (t == Type::F16x2 || t == Type::BF16x2) ? 1 : 0;
  out.fn = by_type<SetpH>(compare_type, cmp);
  if (out.fn == nullptr) return false;
  const ptx::Operand& dst = in.operands[0];
  if (dst.kind == ptx::OperandKind::Pair && dst.elements.size() == 2) {
    d.push(d.predicate(dst.elements[0]));
    d.push(dst.elements[1].kind == ptx::OperandKind::Sink ? UINT32_MAX
                                                          : d.predicate(dst.elements[1]));
  } else {
    d.push(d.predicate(dst));
    d.push(UINT32_MAX);
  }
  Type source_type = (t == Type::F16 || t == Type::BF16)       ? Type::B16
                     : (t == Type::F16x2 || t == Type::BF16x2) ? Type::B32
                                                               : t;
  d.push(d.value(in.operands[1], source_type));
  d.push(d.value(in.operands[2], source_type));
  d.push(combine_op ? d.predicate(in.operands[3]) : UINT32_MAX);
  return true;
}

}  // namespace kiln::sim
