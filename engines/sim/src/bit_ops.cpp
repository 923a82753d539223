// Byte and bit shuffles on 32-bit values: prmt (all its modes), lop3 (any three-input logic
// function), shf (funnel shifts, clamped or wrapped), szext (sign- or zero-extension of a bit
// field) and bmsk (a mask of b bits from bit a).
#include <algorithm>

#include "decoder.h"
#include "lane_ops.h"

namespace kiln::sim {

namespace {

using ptx::Opcode;
using ptx::Type;

uint32_t prmt_op(uint32_t a, uint32_t b, uint32_t c, uint8_t mode) {
  uint64_t bytes = (static_cast<uint64_t>(b) << 32) | a;
  auto byte = [&](uint32_t i) { return static_cast<uint32_t>((bytes >> (8 * (i & 7))) & 0xff); };
  auto sign = [&](uint32_t i) { return (byte(i) & 0x80) ? 0xffu : 0u; };
  uint32_t r = 0;
  if (mode == 0) {
    for (uint32_t k = 0; k < 4; ++k) {
      uint32_t sel = (c >> (4 * k)) & 0xf;
      uint32_t v = (sel & 8) ? sign(sel & 7) : byte(sel & 7);
      r |= v << (8 * k);
    }
    return r;
  }
  uint32_t s = c & 3;
  // Byte selectors of the special modes f4e, b4e, rc8, ecl, ecr, rc16, by mode and c[1:0].
  static constexpr uint8_t kTables[6][4][4] = {
      {{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6}},  // f4e
      {{0, 7, 6, 5}, {1, 0, 7, 6}, {2, 1, 0, 7}, {3, 2, 1, 0}},  // b4e
      {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}},  // rc8
      {{0, 1, 2, 3}, {1, 1, 2, 3}, {2, 2, 2, 3}, {3, 3, 3, 3}},  // ecl
      {{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}},  // ecr
      {{0, 1, 0, 1}, {2, 3, 2, 3}, {0, 1, 0, 1}, {2, 3, 2, 3}},  // rc16
  };
  const uint8_t* sel = kTables[mode - 1][s];
  for (uint32_t k = 0; k < 4; ++k) r |= byte(sel[k]) << (8 * k);
  return r;
}

void prmt(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t *a = x.reg(o[1]), *b = x.reg(o[2]), *c = x.reg(o[3]);
  for_lanes(mask, [&](uint32_t l) {
    d[l] = prmt_op(static_cast<uint32_t>(a[l]), static_cast<uint32_t>(b[l]),
                   static_cast<uint32_t>(c[l]), in.mode);
  });
}

void lop3(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t *a = x.reg(o[1]), *b = x.reg(o[2]), *c = x.reg(o[3]);
  uint32_t lut = static_cast<uint32_t>(in.imm);
  for_lanes(mask, [&](uint32_t l) {
    uint32_t p = static_cast<uint32_t>(a[l]), q = static_cast<uint32_t>(b[l]),
             r = static_cast<uint32_t>(c[l]), out = 0;
    if (lut & 0x01) out |= ~p & ~q & ~r;
    if (lut & 0x02) out |= ~p & ~q & r;
    if (lut & 0x04) out |= ~p & q & ~r;
    if (lut & 0x08) out |= ~p & q & r;
    if (lut & 0x10) out |= p & ~q & ~r;
    if (lut & 0x20) out |= p & ~q & r;
    if (lut & 0x40) out |= p & q & ~r;
    if (lut & 0x80) out |= p & q & r;
    d[l] = out;
  });
}

// shf.{l,r}.{clamp,wrap}.b32 d, a, b, c: funnel shift of b:a by c.
void shf(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t *a = x.reg(o[1]), *b = x.reg(o[2]), *c = x.reg(o[3]);
  bool left = in.mode == 0, clamp = in.flags != 0;
  for_lanes(mask, [&](uint32_t l) {
    uint64_t v =
        (static_cast<uint64_t>(static_cast<uint32_t>(b[l])) << 32) | static_cast<uint32_t>(a[l]);
    uint32_t n = static_cast<uint32_t>(c[l]);
    n = clamp ? std::min<uint32_t>(n, 32) : (n & 31);
    d[l] = left ? static_cast<uint32_t>((v << n) >> 32) : static_cast<uint32_t>(v >> n);
  });
}

// szext.{clamp,wrap}.{u32,s32} d, a, b: the low N bits of a extended to 32, N = b clamped to
// 32 or taken mod 32; N = 0 gives 0. mode: 1 clamp; flags: 1 signed.
void szext(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t *a = x.reg(o[1]), *b = x.reg(o[2]);
  bool clamp = in.mode != 0, is_signed = in.flags != 0;
  for_lanes(mask, [&](uint32_t l) {
    uint32_t v = static_cast<uint32_t>(a[l]), n = static_cast<uint32_t>(b[l]);
    n = clamp ? std::min<uint32_t>(n, 32) : (n & 31);
    uint32_t r = v;
    if (n < 32) {
      r = v & ((1u << n) - 1);
      if (is_signed && n > 0 && ((r >> (n - 1)) & 1)) r |= ~0u << n;
    }
    d[l] = r;
  });
}

// bmsk.{clamp,wrap}.b32 d, a, b: b one-bits from bit a, cut at bit 31. wrap takes a and b mod
// 32; clamp gives 0 for a >= 32 and reads b >= 32 as 32. mode: 1 clamp.
void bmsk(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t *a = x.reg(o[1]), *b = x.reg(o[2]);
  bool clamp = in.mode != 0;
  for_lanes(mask, [&](uint32_t l) {
    uint32_t pos = static_cast<uint32_t>(a[l]), width = static_cast<uint32_t>(b[l]);
    if (clamp && pos >= 32) {
      d[l] = 0;
      return;
    }
    width = clamp ? std::min<uint32_t>(width, 32) : (width & 31);
    d[l] = static_cast<uint32_t>(((uint64_t{1} << width) - 1) << (pos & 31));
  });
}

}  // namespace

bool decode_bit(Decoder& d, const ptx::Instruction& in, Inst& out) {
  out.klass = InstClass::Alu;
  Handler fn = nullptr;
  std::vector<Type> types;
  size_t expected = 4;
  switch (in.opcode) {
    case Opcode::Prmt: {
      fn = &prmt;
      expected = 4;
      const char* modes[] = {"", "f4e", "b4e", "rc8", "ecl", "ecr", "rc16"};
      for (uint8_t m = 1; m < 7; ++m) {
        if (in.has_modifier(modes[m])) out.mode = m;
      }
      break;
    }
    case Opcode::Lop3: {
      if (in.operands.size() != 5 || in.operands[4].kind != ptx::OperandKind::Immediate) {
        return false;
      }
      out.imm = in.operands[4].number.as_int();
      for (size_t i = 0; i < 4; ++i) d.push(d.value(in.operands[i], Type::B32));
      out.fn = &lop3;
      return true;
    }
    case Opcode::Szext:
    case Opcode::Bmsk: {
      bool szext_op = in.opcode == Opcode::Szext;
      Type t = in.type();
      if (szext_op ? (t != Type::U32 && t != Type::S32) : t != Type::B32) return false;
      if (in.has_modifier("clamp") == in.has_modifier("wrap")) return false;
      fn = szext_op ? &szext : &bmsk;
      out.mode = in.has_modifier("clamp") ? 1 : 0;
      out.flags = t == Type::S32 ? 1 : 0;
      expected = 3;
      types = {Type::B32, Type::B32, Type::U32};
      break;
    }
    case Opcode::Shf:
      fn = &shf;
      out.mode = in.has_modifier("l") ? 0 : 1;
      out.flags = in.has_modifier("clamp") ? 1 : 0;
      expected = 4;
      types = {Type::B32, Type::B32, Type::B32, Type::U32};
      break;
    default:
      return false;
  }
  if (fn == nullptr || in.operands.size() != expected) return false;
  for (size_t i = 0; i < in.operands.size(); ++i) {
    d.push(d.value(in.operands[i], i < types.size() ? types[i] : Type::B32));
  }
  out.fn = fn;
  return true;
}

}  // namespace kiln::sim
