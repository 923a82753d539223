// Loads and stores in every state space (scalar and .v2/.v4/.v8, sign- and zero-extending),
// fences and memory barriers (ordering is trivially kept by a sequential simulator; they are
// counted), prefetches and cache hints (no effect), isspacep and createpolicy.
#include <cstring>

#include "decoder.h"
#include "lane_ops.h"
#include "memory_access.h"
#include "observe.h"

namespace kiln::sim {

namespace {

using ptx::Opcode;
using ptx::OperandKind;
using ptx::Type;

enum : uint8_t { kSignExtend = 1 };

// The strength of ld/st (PTX ISA memory model): volatile is relaxed at system scope.
Ordering memory_ordering(const ptx::Instruction& in) {
  if (in.has_modifier("acquire")) return Ordering::Acquire;
  if (in.has_modifier("release")) return Ordering::Release;
  if (in.has_modifier("relaxed") || in.has_modifier("volatile")) return Ordering::Relaxed;
  return Ordering::Weak;
}

inline uint64_t extend(uint64_t v, uint32_t width, bool sign) {
  if (!sign || width >= 8) return v;
  uint32_t shift = 64 - width * 8;
  return static_cast<uint64_t>(static_cast<int64_t>(v << shift) >> shift);
}

// ops: dst[0..vec), base.
template <Space S>
void load(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint32_t vec = in.vec, width = in.width, bytes = vec * width;
  const uint64_t* base = x.reg(o[vec]);
  bool sign = in.flags & kSignExtend;
  uint64_t addresses[32];
  for_lanes(mask, [&](uint32_t l) {
    uint64_t address = base[l] + static_cast<uint64_t>(in.imm);
    addresses[l] = address;
    const uint8_t* p = access<S>(x, address, bytes, l, in);
    if (p == nullptr) return;
    if (vec == 1 && width == 4) {
      uint32_t v;
      std::memcpy(&v, p, 4);
      x.reg(o[0])[l] = sign ? extend(v, 4, true) : v;
      return;
    }
    for (uint32_t i = 0; i < vec; ++i) {
      uint64_t v = 0;
      std::memcpy(&v, p + i * width, width);
      x.reg(o[i])[l] = extend(v, width, sign);
    }
  });
  account<S>(x, addresses, mask, bytes);
  if (x.observer != nullptr) [[unlikely]] {
    observe_access(x, S, AccessKind::Read, ordering_of(in), in, addresses, mask, bytes);
  }
}

// ops: base, src[0..vec).
template <Space S>
void store(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint32_t vec = in.vec, width = in.width, bytes = vec * width;
  const uint64_t* base = x.reg(o[0]);
  uint64_t addresses[32];
  for_lanes(mask, [&](uint32_t l) {
    uint64_t address = base[l] + static_cast<uint64_t>(in.imm);
    addresses[l] = address;
    uint8_t* p = access<S>(x, address, bytes, l, in);
    if (p == nullptr) return;
    for (uint32_t i = 0; i < vec; ++i) {
      uint64_t v = x.reg(o[1 + i])[l];
      std::memcpy(p + i * width, &v, width);
    }
  });
  account<S>(x, addresses, mask, bytes);
  if (x.observer != nullptr) [[unlikely]] {
    observe_access(x, S, AccessKind::Write, ordering_of(in), in, addresses, mask, bytes);
  }
}

// mode: the Ordering the fence gives (Weak for proxy fences, which order no generic accesses);
// flags bit 0: fence.proxy.async, which the observer hears as a ProxyFence.
void fence(Exec& x, const Inst& in, uint32_t mask) {
  ++x.counters.fences;
  if (x.observer != nullptr && mask != 0) [[unlikely]] {
    SyncEvent e = sync_event(x, (in.flags & 1) ? SyncKind::ProxyFence : SyncKind::Fence, in, mask);
    e.ordering = static_cast<Ordering>(in.mode);
    x.observer->sync(e);
  }
}
void no_op(Exec&, const Inst&, uint32_t) {}

void zero(Exec& x, const Inst& in, uint32_t mask) {
  uint64_t* d = x.reg(x.ops(in)[0]);
  for_lanes(mask, [&](uint32_t l) { d[l] = 0; });
}

// isspacep.space p, a
void isspacep(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  const uint64_t* a = x.reg(o[1]);
  Space want = static_cast<Space>(in.mode);
  uint32_t result = 0;
  for_lanes(mask, [&](uint32_t l) {
    Space s = classify(a[l]);
    bool yes = s == want || (want == Space::Const && s == Space::Global);
    if (want == Space::Global) yes = s == Space::Global && x.global->find(a[l], 1) != nullptr;
    if (yes) result |= 1u << l;
  });
  x.set_pred(o[0], mask, result);
}

template <template <Space> class H>
Handler by_space(Space s) {
  switch (s) {
    case Space::Global:
      return &H<Space::Global>::run;
    case Space::Shared:
      return &H<Space::Shared>::run;
    case Space::Local:
      return &H<Space::Local>::run;
    case Space::Const:
      return &H<Space::Const>::run;
    case Space::Param:
      return &H<Space::Param>::run;
    default:
      return &H<Space::Generic>::run;
  }
}
template <Space S>
struct LoadH {
  static void run(Exec& x, const Inst& i, uint32_t m) { load<S>(x, i, m); }
};
template <Space S>
struct StoreH {
  static void run(Exec& x, const Inst& i, uint32_t m) { store<S>(x, i, m); }
};

}  // namespace

bool decode_memory(Decoder& d, const ptx::Instruction& in, Inst& out) {
  switch (in.opcode) {
    case Opcode::Membar:
    case Opcode::Fence:
      out.mode = static_cast<uint8_t>(in.has_modifier("proxy") || in.has_modifier("mbarrier_init")
                                          ? Ordering::Weak
                                      : in.has_modifier("acquire") ? Ordering::Acquire
                                      : in.has_modifier("release") ? Ordering::Release
                                                                   : Ordering::AcqRel);
      if (in.has_modifier("proxy") && in.has_modifier("async")) out.flags |= 1;
      out.fn = &fence;
      out.klass = InstClass::Other;
      return true;
    case Opcode::Prefetch:
    case Opcode::Prefetchu:
    case Opcode::Applypriority:
    case Opcode::Discard:
      out.fn = &no_op;
      out.klass = InstClass::Other;
      return true;
    case Opcode::Createpolicy:
      if (in.operands.empty()) return false;
      d.push(d.value(in.operands[0], Type::B64));
      out.fn = &zero;
      out.klass = InstClass::Other;
      return true;
    case Opcode::Isspacep:
      if (in.operands.size() != 2) return false;
      d.push(d.predicate(in.operands[0]));
      d.push(d.value(in.operands[1], Type::U64));
      out.mode = static_cast<uint8_t>(space_of(in.state_space()));
      out.fn = &isspacep;
      out.klass = InstClass::Alu;
      return true;
    default:
      break;
  }
  bool is_load = in.opcode == Opcode::Ld || in.opcode == Opcode::Ldu;
  if (in.operands.size() < 2) return false;
  Type t = in.type();
  uint32_t bits = ptx::type_bits(t);
  if (bits < 8 || bits > 64) {
    d.fail("ld/st of ." + std::string(ptx::type_name(t)) + " is not supported");
    return false;
  }
  if (in.has_modifier("async") || in.has_modifier("multimem")) return false;
  out.width = static_cast<uint8_t>(bits / 8);
  out.vec = static_cast<uint8_t>(in.vector_width());
  out.space = space_of(in.state_space());
  if (ptx::is_signed_type(t)) out.flags |= kSignExtend;
  out.flags |= static_cast<uint8_t>(static_cast<uint32_t>(memory_ordering(in)) << kOrderingShift);
  const ptx::Operand& value = is_load ? in.operands[0] : in.operands[1];
  const ptx::Operand& where = is_load ? in.operands[1] : in.operands[0];
  Address a = d.address(where);
  // ld/st.param on a .func's parameters or a call block's variables: per-thread local memory.
  if (out.space == Space::Param && a.symbol && a.symbol_space == Space::Local) {
    out.space = Space::Local;
  }
  out.imm = a.offset;
  std::vector<uint32_t> values;
  if (value.kind == OperandKind::Vector) {
    if (value.elements.size() != out.vec) return false;
    for (const ptx::Operand& e : value.elements) values.push_back(d.value(e, t));
  } else {
    if (out.vec != 1) return false;
    values.push_back(d.value(value, t));
  }
  if (is_load) {
    for (uint32_t v : values) d.push(v);
    d.push(a.base);
    out.fn = by_space<LoadH>(out.space);
    out.klass = InstClass::Load;
  } else {
    d.push(a.base);
    for (uint32_t v : values) d.push(v);
    out.fn = by_space<StoreH>(out.space);
    out.klass = InstClass::Store;
  }
  return true;
}

}  // namespace kiln::sim
