// Integer dot products: dp4a (four 8-bit products) and dp2a (two 16-bit by 8-bit products, the
// 8-bit half chosen by .lo/.hi), each accumulated into a 32-bit c; .u32/.s32 per operand.
#include "decoder.h"
#include "lane_ops.h"

namespace kiln::sim {

namespace {

using ptx::Opcode;
using ptx::Type;

enum : uint8_t { kSignedA = 1, kSignedB = 2, kHigh = 4 };

int32_t byte_of(uint32_t v, uint32_t i, bool is_signed) {
  uint32_t b = (v >> (8 * i)) & 0xff;
  return is_signed ? static_cast<int8_t>(b) : static_cast<int32_t>(b);
}

int32_t half_of(uint32_t v, uint32_t i, bool is_signed) {
  uint32_t h = (v >> (16 * i)) & 0xffff;
  return is_signed ? static_cast<int16_t>(h) : static_cast<int32_t>(h);
}

// ops: d, a, b, c. mode 4: dp4a, 2: dp2a.
void dot(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t *a = x.reg(o[1]), *b = x.reg(o[2]), *c = x.reg(o[3]);
  bool sa = in.flags & kSignedA, sb = in.flags & kSignedB;
  for_lanes(mask, [&](uint32_t l) {
    uint32_t p = static_cast<uint32_t>(a[l]), q = static_cast<uint32_t>(b[l]);
    int64_t sum = 0;
    if (in.mode == 4) {
      for (uint32_t i = 0; i < 4; ++i) sum += int64_t{byte_of(p, i, sa)} * byte_of(q, i, sb);
    } else {
      uint32_t first = (in.flags & kHigh) ? 2 : 0;
      for (uint32_t i = 0; i < 2; ++i) {
        sum += int64_t{half_of(p, i, sa)} * byte_of(q, first + i, sb);
      }
    }
    d[l] = static_cast<uint32_t>(static_cast<int64_t>(static_cast<uint32_t>(c[l])) + sum);
  });
}

}  // namespace

bool decode_dot(Decoder& d, const ptx::Instruction& in, Inst& out) {
  if (in.types.size() != 2 || in.operands.size() != 4) return false;
  out.mode = in.opcode == Opcode::Dp4a ? 4 : 2;
  if (in.types[0] == Type::S32) out.flags |= kSignedA;
  if (in.types[1] == Type::S32) out.flags |= kSignedB;
  if (in.has_modifier("hi")) out.flags |= kHigh;
  for (const ptx::Operand& op : in.operands) d.push(d.value(op, Type::B32));
  out.klass = InstClass::Alu;
  out.fn = &dot;
  return true;
}

}  // namespace kiln::sim
