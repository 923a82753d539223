// Warp-collective instructions: shfl.sync (up, down, bfly, idx with the clamp and segment
// mask of operand c), vote.sync (all, any, uni, ballot), redux.sync, match.sync (any, all) and
// elect.sync. Lanes exchange values through the warp's register file.
#include <bit>
#include <cstring>

#include "decoder.h"
#include "lane_ops.h"

namespace kiln::sim {

namespace {

using ptx::Opcode;
using ptx::OperandKind;
using ptx::Type;

uint32_t first_lane(uint32_t mask) {
  return mask == 0 ? 0 : static_cast<uint32_t>(std::countr_zero(mask));
}

// ops: d, p (or UINT32_MAX), a, b, c, membermask. mode: 0 up, 1 down, 2 bfly, 3 idx.
void shfl(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  uint64_t source[32];
  std::memcpy(source, x.reg(o[2]), sizeof source);
  const uint64_t *b = x.reg(o[3]), *c = x.reg(o[4]);
  uint32_t valid = 0;
  for_lanes(mask, [&](uint32_t lane) {
    uint32_t bval = static_cast<uint32_t>(b[lane]) & 31;
    uint32_t cval = static_cast<uint32_t>(c[lane]) & 31;
    uint32_t seg = (static_cast<uint32_t>(c[lane]) >> 8) & 31;
    uint32_t max_lane = (lane & seg) | (cval & ~seg);
    uint32_t min_lane = lane & seg;
    int32_t j = 0;
    bool ok = false;
    switch (in.mode) {
      case 0:
        j = static_cast<int32_t>(lane) - static_cast<int32_t>(bval);
        ok = j >= static_cast<int32_t>(max_lane);
        break;
      case 1:
        j = static_cast<int32_t>(lane + bval);
        ok = j <= static_cast<int32_t>(max_lane);
        break;
      case 2:
        j = static_cast<int32_t>(lane ^ bval);
        ok = j <= static_cast<int32_t>(max_lane);
        break;
      default:
        j = static_cast<int32_t>(min_lane | (bval & ~seg));
        ok = j <= static_cast<int32_t>(max_lane);
        break;
    }
    if (!ok) j = static_cast<int32_t>(lane);
    d[lane] = static_cast<uint32_t>(source[j & 31]);
    if (ok) valid |= 1u << lane;
  });
  if (o[1] != UINT32_MAX) x.set_pred(o[1], mask, valid);
}

// ops: d, a (predicate), membermask. mode: 0 all, 1 any, 2 uni, 3 ballot.
void vote(Exec& x, const Inst& in, uint32_t mask) {
  if (mask == 0) return;
  const uint32_t* o = x.ops(in);
  uint32_t members = static_cast<uint32_t>(x.reg(o[2])[first_lane(mask)]) & mask;
  uint32_t p = x.pred_mask(o[1]) & members;
  if (in.mode == 3) {
    uint64_t* d = x.reg(o[0]);
    for_lanes(mask, [&](uint32_t l) { d[l] = p; });
    return;
  }
  bool r = in.mode == 0 ? p == members : in.mode == 1 ? p != 0 : (p == 0 || p == members);
  x.set_pred(o[0], mask, r ? ~0u : 0u);
}

// ops: d, a, membermask. mode: 0 add, 1 min, 2 max, 3 and, 4 or, 5 xor; flags 1: signed.
void redux(Exec& x, const Inst& in, uint32_t mask) {
  if (mask == 0) return;
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t* a = x.reg(o[1]);
  uint32_t members = static_cast<uint32_t>(x.reg(o[2])[first_lane(mask)]) & mask;
  bool is_signed = in.flags & 1;
  uint32_t acc = 0;
  bool first = true;
  for_lanes(members, [&](uint32_t l) {
    uint32_t v = static_cast<uint32_t>(a[l]);
    if (first) {
      acc = v;
      first = false;
      return;
    }
    switch (in.mode) {
      case 0:
        acc += v;
        break;
      case 1:
        acc = is_signed ? (static_cast<int32_t>(v) < static_cast<int32_t>(acc) ? v : acc)
                        : std::min(acc, v);
        break;
      case 2:
        acc = is_signed ? (static_cast<int32_t>(v) > static_cast<int32_t>(acc) ? v : acc)
                        : std::max(acc, v);
        break;
      case 3:
        acc &= v;
        break;
      case 4:
        acc |= v;
        break;
      default:
        acc ^= v;
        break;
    }
  });
  for_lanes(mask, [&](uint32_t l) { d[l] = acc; });
}

// ops: d, p (or UINT32_MAX), a, membermask. mode: 0 any, 1 all.
void match(Exec& x, const Inst& in, uint32_t mask) {
  if (mask == 0) return;
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  uint64_t values[32];
  std::memcpy(values, x.reg(o[2]), sizeof values);
  uint64_t width_mask = in.width == 8 ? ~0ull : 0xffffffffull;
  uint32_t members = static_cast<uint32_t>(x.reg(o[3])[first_lane(mask)]) & mask;
  uint32_t all_same = 0;
  uint64_t result[32];
  for_lanes(mask, [&](uint32_t l) {
    uint32_t same = 0;
    for_lanes(members, [&](uint32_t k) {
      if ((values[k] & width_mask) == (values[l] & width_mask)) same |= 1u << k;
    });
    if (in.mode == 0) {
      result[l] = same;
    } else {
      result[l] = same == members ? members : 0;
      if (same == members) all_same |= 1u << l;
    }
  });
  for_lanes(mask, [&](uint32_t l) { d[l] = result[l]; });
  if (o[1] != UINT32_MAX) x.set_pred(o[1], mask, all_same);
}

// ops: d, p (or UINT32_MAX), membermask.
void elect(Exec& x, const Inst& in, uint32_t mask) {
  if (mask == 0) return;
  const uint32_t* o = x.ops(in);
  uint32_t members = static_cast<uint32_t>(x.reg(o[2])[first_lane(mask)]) & mask;
  uint32_t leader = first_lane(members);
  uint64_t* d = x.reg(o[0]);
  for_lanes(mask, [&](uint32_t l) { d[l] = leader; });
  if (o[1] != UINT32_MAX) x.set_pred(o[1], mask, members == 0 ? 0 : 1u << leader);
}

// Destination d[|p]: pushes d and p (UINT32_MAX when absent).
void push_pair(Decoder& d, const ptx::Operand& op, Type t) {
  if (op.kind == OperandKind::Pair && op.elements.size() == 2) {
    d.push(d.value(op.elements[0], t));
    d.push(op.elements[1].kind == OperandKind::Sink ? UINT32_MAX : d.predicate(op.elements[1]));
  } else {
    d.push(d.value(op, t));
    d.push(UINT32_MAX);
  }
}

}  // namespace

bool decode_warp(Decoder& d, const ptx::Instruction& in, Inst& out) {
  out.klass = InstClass::Shuffle;
  size_t n = in.operands.size();
  switch (in.opcode) {
    case Opcode::Shfl: {
      if (!in.has_modifier("sync") || n != 5 || in.type() != Type::B32) return false;
      out.mode = in.has_modifier("up")     ? 0
                 : in.has_modifier("down") ? 1
                 : in.has_modifier("bfly") ? 2
                                           : 3;
      push_pair(d, in.operands[0], Type::B32);
      for (size_t i = 1; i < 5; ++i) d.push(d.value(in.operands[i], Type::B32));
      out.fn = &shfl;
      return true;
    }
    case Opcode::Vote: {
      if (!in.has_modifier("sync") || n != 3) return false;
      out.mode = in.has_modifier("all")      ? 0
                 : in.has_modifier("any")    ? 1
                 : in.has_modifier("uni")    ? 2
                 : in.has_modifier("ballot") ? 3
                                             : 4;
      if (out.mode == 4) return false;
      d.push(out.mode == 3 ? d.value(in.operands[0], Type::B32) : d.predicate(in.operands[0]));
      d.push(d.predicate(in.operands[1]));
      d.push(d.value(in.operands[2], Type::B32));
      out.fn = &vote;
      return true;
    }
    case Opcode::Redux: {
      Type t = in.type();
      if (!in.has_modifier("sync") || n != 3 || ptx::type_bits(t) != 32 || ptx::is_float_type(t)) {
        return false;
      }
      const char* names[] = {"add", "min", "max", "and", "or", "xor"};
      bool found = false;
      for (uint8_t i = 0; i < 6; ++i) {
        if (in.has_modifier(names[i])) {
          out.mode = i;
          found = true;
        }
      }
      if (!found) return false;
      out.flags = t == Type::S32 ? 1 : 0;
      for (const ptx::Operand& op : in.operands) d.push(d.value(op, t));
      out.fn = &redux;
      return true;
    }
    case Opcode::Match: {
      Type t = in.type();
      if (!in.has_modifier("sync") || n != 3) return false;
      out.mode = in.has_modifier("all") ? 1 : 0;
      out.width = static_cast<uint8_t>(ptx::type_bits(t) / 8);
      push_pair(d, in.operands[0], Type::B32);
      d.push(d.value(in.operands[1], t));
      d.push(d.value(in.operands[2], Type::B32));
      out.fn = &match;
      return true;
    }
    case Opcode::Elect: {
      if (!in.has_modifier("sync") || n != 2) return false;
      push_pair(d, in.operands[0], Type::B32);
      d.push(d.value(in.operands[1], Type::B32));
      out.fn = &elect;
      return true;
    }
    default:
      return false;
  }
}

}  // namespace kiln::sim
