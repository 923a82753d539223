// Moves: mov (registers, immediates, symbol addresses, special registers, vector pack and
// unpack), cvta between generic and state-space addresses, activemask, and predicate logic
// (and/or/xor/not/mov on .pred).
#include <bit>

#include "decoder.h"
#include "lane_ops.h"

namespace kiln::sim {

namespace {

using ptx::Opcode;
using ptx::OperandKind;
using ptx::SpecialRegister;
using ptx::Type;

void mov(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t* a = x.reg(o[1]);
  for_lanes(mask, [&](uint32_t l) { d[l] = a[l]; });
}

// mov.bN d, {a, b, ...}: width = bits per element, ops: d, elements...
void pack(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  uint32_t n = in.nops - 1u, bits = in.width;
  uint64_t element_mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
  for_lanes(mask, [&](uint32_t l) {
    uint64_t v = 0;
    for (uint32_t i = 0; i < n; ++i) v |= (x.reg(o[1 + i])[l] & element_mask) << (bits * i);
    d[l] = v;
  });
}

// mov.bN {a, b, ...}, s: ops: elements..., s.
void unpack(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint32_t n = in.nops - 1u, bits = in.width;
  const uint64_t* s = x.reg(o[n]);
  uint64_t element_mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
  for_lanes(mask, [&](uint32_t l) {
    uint64_t v = s[l];
    for (uint32_t i = 0; i < n; ++i) x.reg(o[i])[l] = (v >> (bits * i)) & element_mask;
  });
}

// mapa: ops d, a, rank. mode 1: generic addresses (in the shared window).
void mapa(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t *a = x.reg(o[1]), *r = x.reg(o[2]);
  bool generic = in.mode == 1;
  for_lanes(mask, [&](uint32_t l) {
    uint64_t address = generic ? a[l] - kSharedWindow : a[l];
    uint64_t mapped = ((r[l] + 1) << kClusterRankShift) | (address & kSharedOffsetMask);
    d[l] = generic ? mapped + kSharedWindow : mapped;
  });
}

// %clock, %clock64, %globaltimer: counters that only grow (warp-instructions so far).
void clock_read(Exec& x, const Inst& in, uint32_t mask) {
  uint64_t* d = x.reg(x.ops(in)[0]);
  uint64_t now = x.counters.warp_instructions + x.slice_steps;
  uint64_t v = in.mode == 0   ? (now & 0xffffffffu)
               : in.mode == 1 ? (now >> 32)
               : in.mode == 2 ? now
                              : now * 1000;  // globaltimer: nanoseconds at a nominal 1 GHz
  if (in.mode == 4) v &= 0xffffffffu;
  if (in.mode == 5) v >>= 32;
  for_lanes(mask, [&](uint32_t l) { d[l] = v; });
}

void activemask(Exec& x, const Inst& in, uint32_t mask) {
  uint64_t* d = x.reg(x.ops(in)[0]);
  uint32_t active = x.warp->stack.back().mask;
  for_lanes(mask, [&](uint32_t l) { d[l] = active; });
}

// cvta: mode 0 adds `imm` (to generic), 1 subtracts it (to the space); flags 1: 32-bit result.
void cvta(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t* a = x.reg(o[1]);
  uint64_t base = static_cast<uint64_t>(in.imm);
  bool narrow = in.flags & 1;
  for_lanes(mask, [&](uint32_t l) {
    uint64_t v = in.mode == 0 ? a[l] + base : a[l] - base;
    d[l] = narrow ? (v & 0xffffffffu) : v;
  });
}

// Predicate logic: ops: d, a, b (b absent for not/mov).
void pred_logic(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint32_t a = x.pred_mask(o[1]);
  uint32_t b = in.nops > 2 ? x.pred_mask(o[2]) : 0;
  uint32_t r = 0;
  switch (in.mode) {
    case 0:
      r = a & b;
      break;
    case 1:
      r = a | b;
      break;
    case 2:
      r = a ^ b;
      break;
    case 3:
      r = ~a;
      break;
    case 5:  // mov.pred p, 1
      r = ~0u;
      break;
    case 6:  // mov.pred p, 0
      r = 0;
      break;
    default:
      r = a;
      break;
  }
  x.set_pred(o[0], mask, r);
}

int clock_mode(SpecialRegister r) {
  switch (r) {
    case SpecialRegister::Clock:
      return 0;
    case SpecialRegister::ClockHi:
      return 1;
    case SpecialRegister::Clock64:
      return 2;
    case SpecialRegister::Globaltimer:
      return 3;
    case SpecialRegister::GlobaltimerLo:
      return 4;
    case SpecialRegister::GlobaltimerHi:
      return 5;
    default:
      return -1;
  }
}

}  // namespace

bool decode_move(Decoder& d, const ptx::Instruction& in, Inst& out) {
  out.klass = InstClass::Alu;
  Type t = in.type();
  if (in.opcode == Opcode::Activemask) {
    if (in.operands.size() != 1) return false;
    d.push(d.value(in.operands[0], Type::B32));
    out.fn = &activemask;
    return true;
  }
  if (t == Type::Pred) {
    uint8_t mode = in.opcode == Opcode::And   ? 0
                   : in.opcode == Opcode::Or  ? 1
                   : in.opcode == Opcode::Xor ? 2
                   : in.opcode == Opcode::Not ? 3
                                              : 4;
    size_t expected = mode <= 2 ? 3 : 2;
    if (in.operands.size() != expected) return false;
    if (mode == 4 && in.operands[1].kind == OperandKind::Immediate) {
      d.push(d.predicate(in.operands[0]));
      d.push(d.predicate(in.operands[0]));
      out.mode = in.operands[1].number.bits != 0 ? 5 : 6;
      out.fn = &pred_logic;
      return true;
    }
    for (const ptx::Operand& op : in.operands) d.push(d.predicate(op));
    out.mode = mode;
    out.fn = &pred_logic;
    return true;
  }
  if (in.opcode == Opcode::Mapa) {
    // mapa{.shared::cluster} d, a, rank: the same shared byte in CTA `rank` of the cluster.
    if (in.operands.size() != 3) return false;
    for (size_t i = 0; i < 3; ++i) d.push(d.value(in.operands[i], i == 2 ? Type::U32 : t));
    out.mode = in.state_space() == ptx::StateSpace::Generic ? 1 : 0;
    out.fn = &mapa;
    return true;
  }
  if (in.opcode == Opcode::Cvta) {
    if (in.operands.size() != 2) return false;
    bool to = in.has_modifier("to");
    Space space = space_of(in.state_space());
    uint64_t window = space == Space::Shared  ? kSharedWindow
                      : space == Space::Local ? kLocalWindow
                      : space == Space::Param ? kParamWindow
                                              : 0;
    if (space == Space::Generic) return false;
    out.imm = static_cast<int64_t>(window);
    out.mode = to ? 1 : 0;
    out.flags = ptx::type_bits(t) == 32 ? 1 : 0;
    d.push(d.value(in.operands[0], t));
    d.push(d.value(in.operands[1], t));
    out.fn = &cvta;
    return true;
  }
  if (in.opcode != Opcode::Mov || in.operands.size() != 2) return false;
  const ptx::Operand& dst = in.operands[0];
  const ptx::Operand& src = in.operands[1];
  uint32_t bits = ptx::type_bits(t);
  if (src.kind == OperandKind::Vector) {
    if (src.elements.empty() || bits % src.elements.size() != 0) return false;
    out.width = static_cast<uint8_t>(bits / src.elements.size());
    d.push(d.value(dst, t));
    for (const ptx::Operand& e : src.elements) d.push(d.value(e, Type::B64));
    out.fn = &pack;
    return true;
  }
  if (dst.kind == OperandKind::Vector) {
    if (dst.elements.empty() || bits % dst.elements.size() != 0) return false;
    out.width = static_cast<uint8_t>(bits / dst.elements.size());
    for (const ptx::Operand& e : dst.elements) d.push(d.value(e, Type::B64));
    d.push(d.value(src, t));
    out.fn = &unpack;
    return true;
  }
  if (src.kind == OperandKind::SpecialRegister) {
    int mode = clock_mode(src.special);
    if (mode >= 0) {
      out.mode = static_cast<uint8_t>(mode);
      d.push(d.value(dst, t));
      out.fn = &clock_read;
      return true;
    }
  }
  d.push(d.value(dst, t));
  d.push(d.value(src, t));
  out.fn = &mov;
  return true;
}

}  // namespace kiln::sim
