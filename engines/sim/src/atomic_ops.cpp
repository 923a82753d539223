// atom and red on global, shared and generic addresses: add (integers, f32, f64, f16, bf16 and
// their x2 forms), min, max, inc, dec, and, or, xor, exch, cas. Lanes apply their updates one
// after another in lane order, as one valid serialization of the hardware's.
#include <cstring>
#include <string_view>

#include "decoder.h"
#include "half.h"
#include "lane_ops.h"
#include "memory_access.h"
#include "observe.h"

namespace kiln::sim {

namespace {

using ptx::Opcode;
using ptx::Type;

enum AtomOp : uint8_t { Add, Min, Max, Inc, Dec, And, Or, Xor, Exch, Cas };

template <typename T>
T minmax(T a, T b, bool is_max) {
  return is_max ? (a > b ? a : b) : (a < b ? a : b);
}

uint32_t half_add(uint32_t a, uint32_t b, SmallFloat f) {
  return double_to_small(small_to_double(a, f) + small_to_double(b, f), f, 0, false);
}

uint64_t apply(AtomOp op, Type t, uint64_t old, uint64_t b, uint64_t c) {
  switch (op) {
    case Add:
      switch (t) {
        case Type::F32:
          return put(get<float>(old) + get<float>(b));
        case Type::F64:
          return put(get<double>(old) + get<double>(b));
        case Type::F16:
          return half_add(old & 0xffff, b & 0xffff, kF16);
        case Type::BF16:
          return half_add(old & 0xffff, b & 0xffff, kBF16);
        case Type::F16x2:
        case Type::BF16x2: {
          SmallFloat f = t == Type::F16x2 ? kF16 : kBF16;
          uint64_t lo = half_add(old & 0xffff, b & 0xffff, f);
          uint64_t hi = half_add((old >> 16) & 0xffff, (b >> 16) & 0xffff, f);
          return (hi << 16) | lo;
        }
        default:
          return old + b;
      }
    case Min:
    case Max: {
      bool is_max = op == Max;
      switch (t) {
        case Type::S32:
          return put(minmax(get<int32_t>(old), get<int32_t>(b), is_max));
        case Type::S64:
          return put(minmax(get<int64_t>(old), get<int64_t>(b), is_max));
        case Type::U32:
          return put(minmax(get<uint32_t>(old), get<uint32_t>(b), is_max));
        case Type::F32:
          return put(minmax(get<float>(old), get<float>(b), is_max));
        default:
          return minmax(old, b, is_max);
      }
    }
    case Inc: {
      uint32_t o = static_cast<uint32_t>(old), m = static_cast<uint32_t>(b);
      return o >= m ? 0 : o + 1;
    }
    case Dec: {
      uint32_t o = static_cast<uint32_t>(old), m = static_cast<uint32_t>(b);
      return (o == 0 || o > m) ? m : o - 1;
    }
    case And:
      return old & b;
    case Or:
      return old | b;
    case Xor:
      return old ^ b;
    case Exch:
      return b;
    case Cas:
      return old == b ? c : old;
  }
  return old;
}

// ops: d (atom only), base, b[, c]. inst.mode: AtomOp; inst.target: Type; inst.flags 1: red.
template <Space S>
void atomic(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  bool red = in.flags & 1;
  uint32_t first = red ? 0 : 1;
  uint64_t* d = red ? nullptr : x.reg(o[0]);
  const uint64_t* base = x.reg(o[first]);
  const uint64_t* b = x.reg(o[first + 1]);
  const uint64_t* c = in.nops > first + 2 ? x.reg(o[first + 2]) : b;
  uint32_t width = in.width;
  AtomOp op = static_cast<AtomOp>(in.mode);
  Type t = static_cast<Type>(in.target);
  uint64_t width_mask = width >= 8 ? ~0ull : (1ull << (8 * width)) - 1;
  uint64_t addresses[32];
  for_lanes(mask, [&](uint32_t l) {
    uint64_t address = base[l] + static_cast<uint64_t>(in.imm);
    addresses[l] = address;
    uint8_t* p = access<S>(x, address, width, l, in);
    if (p == nullptr) return;
    uint64_t old = 0;
    std::memcpy(&old, p, width);
    uint64_t updated = apply(op, t, old, b[l] & width_mask, c[l] & width_mask);
    std::memcpy(p, &updated, width);
    if (d) d[l] = old;
  });
  account<S>(x, addresses, mask, width);
  if (x.observer != nullptr) [[unlikely]] {
    observe_access(x, S, AccessKind::Atomic, ordering_of(in), in, addresses, mask, width);
  }
}

template <Space S>
struct AtomicH {
  static void run(Exec& x, const Inst& i, uint32_t m) { atomic<S>(x, i, m); }
};

}  // namespace

bool decode_atomic(Decoder& d, const ptx::Instruction& in, Inst& out) {
  static constexpr std::pair<std::string_view, AtomOp> kOps[] = {
      {"add", Add}, {"min", Min}, {"max", Max}, {"inc", Inc},   {"dec", Dec},
      {"and", And}, {"or", Or},   {"xor", Xor}, {"exch", Exch}, {"cas", Cas}};
  bool found = false;
  for (const std::string& m : in.modifiers) {
    for (const auto& [name, op] : kOps) {
      if (m == name) {
        out.mode = op;
        found = true;
      }
    }
  }
  if (!found || in.vector_width() != 1) return false;
  Type t = in.type();
  uint32_t bits = ptx::type_bits(t);
  if (bits < 16 || bits > 64) return false;
  bool red = in.opcode == Opcode::Red;
  size_t expected = (red ? 2 : 3) + (out.mode == Cas ? 1 : 0);
  if (in.operands.size() != expected && in.operands.size() != expected + 1) return false;
  out.klass = InstClass::Atomic;
  out.flags = red ? 1 : 0;
  // atom/red without .sem are relaxed (PTX ISA, "Memory Consistency Model").
  Ordering ordering = in.has_modifier("acq_rel")   ? Ordering::AcqRel
                      : in.has_modifier("acquire") ? Ordering::Acquire
                      : in.has_modifier("release") ? Ordering::Release
                                                   : Ordering::Relaxed;
  out.flags |= static_cast<uint8_t>(static_cast<uint32_t>(ordering) << kOrderingShift);
  out.width = static_cast<uint8_t>(bits / 8);
  out.target = static_cast<uint32_t>(t);
  out.space = space_of(in.state_space());
  size_t i = 0;
  if (!red) d.push(d.value(in.operands[i++], t));
  Address a = d.address(in.operands[i++]);
  out.imm = a.offset;
  d.push(a.base);
  for (; i < expected; ++i) d.push(d.value(in.operands[i], t));
  switch (out.space) {
    case Space::Global:
      out.fn = &AtomicH<Space::Global>::run;
      break;
    case Space::Shared:
      out.fn = &AtomicH<Space::Shared>::run;
      break;
    case Space::Generic:
      out.fn = &AtomicH<Space::Generic>::run;
      break;
    default:
      return false;
  }
  return true;
}

}  // namespace kiln::sim
