// Extended-precision integer arithmetic with the carry flag (CC.CF, one bit per lane):
// add.cc, addc{.cc}, sub.cc, subc{.cc}, mad{.lo,.hi}.cc and madc{.lo,.hi}{.cc}, for 32- and
// 64-bit integers. For subtraction the flag is a borrow: subc computes a - (b + CF).
#include <bit>

#include "decoder.h"
#include "lane_ops.h"

namespace kiln::sim {

namespace {

using ptx::Opcode;
using ptx::Type;
__extension__ typedef unsigned __int128 u128;

enum : uint8_t { kCarryIn = 1, kCarryOut = 2 };
enum CarryOp : uint8_t { Add, Sub, MadLo, MadHi };

// ops: d, a, b[, c]. mode: CarryOp.
template <typename T>
void carry(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t *a = x.reg(o[1]), *b = x.reg(o[2]);
  const uint64_t* c = in.nops > 3 ? x.reg(o[3]) : b;
  Warp& w = *x.warp;
  uint32_t flags_out = 0;
  constexpr unsigned kBits = sizeof(T) * 8;
  for_lanes(mask, [&](uint32_t l) {
    u128 cin = (in.flags & kCarryIn) ? ((w.carry >> l) & 1) : 0;
    u128 p = get<T>(a[l]), q = get<T>(b[l]);
    u128 r = 0;
    bool out = false;
    switch (static_cast<CarryOp>(in.mode)) {
      case Add:
        r = p + q + cin;
        out = (r >> kBits) != 0;
        break;
      case Sub:
        r = p - q - cin;
        out = p < q + cin;
        break;
      case MadLo:
      case MadHi: {
        u128 product = p * q;
        u128 part = in.mode == MadLo ? (product & ((u128(1) << kBits) - 1)) : (product >> kBits);
        r = part + get<T>(c[l]) + cin;
        out = (r >> kBits) != 0;
        break;
      }
    }
    d[l] = put<T>(static_cast<T>(r));
    if (out) flags_out |= 1u << l;
  });
  if (in.flags & kCarryOut) w.carry = (w.carry & ~mask) | (flags_out & mask);
}

}  // namespace

bool decode_carry(Decoder& d, const ptx::Instruction& in, Inst& out) {
  Type t = in.type();
  uint32_t bits = ptx::type_bits(t);
  if ((bits != 32 && bits != 64) || ptx::is_float_type(t)) return false;
  bool cc = in.has_modifier("cc");
  switch (in.opcode) {
    case Opcode::Add:
      out.mode = Add;
      break;
    case Opcode::Addc:
      out.mode = Add;
      out.flags |= kCarryIn;
      break;
    case Opcode::Sub:
      out.mode = Sub;
      break;
    case Opcode::Subc:
      out.mode = Sub;
      out.flags |= kCarryIn;
      break;
    case Opcode::Mad:
      out.mode = in.has_modifier("hi") ? MadHi : MadLo;
      break;
    case Opcode::Madc:
      out.mode = in.has_modifier("hi") ? MadHi : MadLo;
      out.flags |= kCarryIn;
      break;
    default:
      return false;
  }
  if (cc) out.flags |= kCarryOut;
  size_t expected = out.mode >= MadLo ? 4 : 3;
  if (in.operands.size() != expected) return false;
  for (const ptx::Operand& op : in.operands) d.push(d.value(op, t));
  out.klass = InstClass::Alu;
  out.fn = bits == 32 ? &carry<uint32_t> : &carry<uint64_t>;
  return true;
}

}  // namespace kiln::sim
