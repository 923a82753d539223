// Asynchronous copies and mbarriers: cp.async (ca/cg, 4/8/16 bytes, src-size zero fill) with
// commit_group/wait_group/wait_all and cp.async.mbarrier.arrive; mbarrier init, arrive (with
// count), arrive.expect_tx, expect_tx, complete_tx, arrive_drop, inval, test_wait/try_wait
// with a phase token or parity. cp.async copies land when the thread waits for their group, so
// reading the destination before the wait sees the old bytes, as it may on a GPU.
#include <bit>
#include <cstring>

#include "decoder.h"
#include "lane_ops.h"
#include "mbarrier.h"
#include "memory_access.h"
#include "observe.h"

namespace kiln::sim {

namespace {

using ptx::Opcode;
using ptx::OperandKind;
using ptx::Type;

void complete(Exec& x, const std::vector<PendingCopy>& copies) {
  for (const PendingCopy& c : copies) {
    uint8_t* dst = x.cta->shared.data() + c.shared_offset;
    if (c.bytes != 0) {
      const uint8_t* src = x.global->bytes(c.source, c.bytes);
      if (src != nullptr) std::memcpy(dst, src, c.bytes);
    }
    if (c.fill != 0) std::memset(dst + c.bytes, 0, c.fill);
  }
}

// ops: dst base, src base, src-size (or UINT32_MAX). width = cp-size; imm = dst offset;
// target = src offset (as int32).
void cp_async(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  const uint64_t *dst = x.reg(o[0]), *src = x.reg(o[1]);
  const uint64_t* size = o[2] == UINT32_MAX ? nullptr : x.reg(o[2]);
  uint32_t bytes = in.width;
  int64_t src_offset = static_cast<int32_t>(in.target);
  for_lanes(mask, [&](uint32_t l) {
    uint64_t d = dst[l] + static_cast<uint64_t>(in.imm);
    uint64_t s = src[l] + static_cast<uint64_t>(src_offset);
    uint32_t copied = size ? static_cast<uint32_t>(std::min<uint64_t>(size[l], bytes)) : bytes;
    uint32_t off = x.shared_offset(in.space, d, bytes, l, in);
    if (off == UINT32_MAX) return;
    if (off % bytes != 0 || s % bytes != 0) {
      x.fault(in, l, "misaligned", off % bytes ? d : s,
              "cp.async of " + std::to_string(bytes) +
                  " bytes needs both addresses aligned to the copy size");
      return;
    }
    if (copied != 0 && x.global_bytes(s, copied, l, in) == nullptr) return;
    x.warp->uncommitted.push_back({l, off, s, copied, bytes - copied, UINT32_MAX});
    if (x.observer != nullptr) [[unlikely]] {
      // The async proxy reads the source and writes the destination from now until the
      // thread waits for the copy's group.
      if (copied != 0) observe_range(x, Space::Global, AccessKind::Read, in, l, s, copied, true);
      observe_range(x, Space::Shared, AccessKind::Write, in, l, off, bytes, true);
    }
  });
  x.counters.bytes[static_cast<size_t>(Space::Global)] += std::popcount(mask) * bytes;
  x.counters.bytes[static_cast<size_t>(Space::Shared)] += std::popcount(mask) * bytes;
}

void commit_group(Exec& x, const Inst& in, uint32_t mask) {
  if (mask == 0) return;
  Warp& w = *x.warp;
  w.groups.push_back(std::move(w.uncommitted));
  w.uncommitted.clear();
  if (x.observer != nullptr) [[unlikely]] {
    x.observer->sync(sync_event(x, SyncKind::AsyncCommit, in, mask));
  }
}

// imm: groups allowed to stay pending; flags 1: wait_all (commits first).
void wait_group(Exec& x, const Inst& in, uint32_t mask) {
  if (mask == 0) return;
  Warp& w = *x.warp;
  if (in.flags & 1) commit_group(x, in, mask);
  while (w.groups.size() > static_cast<size_t>(in.imm)) {
    complete(x, w.groups.front());
    w.groups.pop_front();
  }
  if (x.observer != nullptr) [[unlikely]] {
    SyncEvent e = sync_event(x, SyncKind::AsyncWait, in, mask);
    e.id = (in.flags & 1) ? 0 : static_cast<uint32_t>(in.imm);
    x.observer->sync(e);
  }
}

// ops: barrier base. flags 1: .noinc.
void cp_async_mbarrier_arrive(Exec& x, const Inst& in, uint32_t mask) {
  if (mask == 0) return;
  Warp& w = *x.warp;
  const uint64_t* base = x.reg(x.ops(in)[0]);
  // The copies issued so far complete first.
  for (auto& g : w.groups) complete(x, g);
  w.groups.clear();
  complete(x, w.uncommitted);
  w.uncommitted.clear();
  bool noinc = in.flags & 1;  // without .noinc the pending count was raised and lowered
  if (!noinc && x.observer == nullptr) return;
  for_lanes(mask, [&](uint32_t l) {
    Cta* owner = nullptr;
    uint32_t off =
        x.shared_offset(in.space, base[l] + static_cast<uint64_t>(in.imm), 8, l, in, &owner);
    if (off == UINT32_MAX) return;
    Mbarrier* m = find_mbarrier(x, *owner, in, off, l);
    if (m == nullptr) return;
    if (noinc) mbarrier_arrive(*m, 1);
    if (x.observer != nullptr) [[unlikely]] {
      SyncEvent e = sync_event(x, SyncKind::MbarrierArrive, in, 1u << l);
      e.async = true;
      e.owner = owner->rank;
      e.id = off;
      e.phase = m->phase;
      e.count = noinc ? 1 : 0;  // without .noinc the arrival is net zero
      x.observer->sync(e);
    }
  });
}

enum MbarOp : uint8_t {
  Init,
  Arrive,
  ArriveExpectTx,
  ExpectTx,
  CompleteTx,
  ArriveDrop,
  Inval,
  TestWait,
  TryWait
};

// ops by op: Init: base, count. Arrive*/ArriveDrop: state (or UINT32_MAX), base, count (or
// UINT32_MAX). ExpectTx/CompleteTx: base, count. Inval: base. Waits: pred, base, token.
// flags 1: parity form of the waits.
void mbarrier(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  MbarOp op = static_cast<MbarOp>(in.mode);
  uint32_t base_index = (op == Init || op == ExpectTx || op == CompleteTx || op == Inval) ? 0 : 1;
  const uint64_t* base = x.reg(o[base_index]);
  uint32_t done = 0;
  bool any_waiting = false;
  for_lanes(mask, [&](uint32_t l) {
    if (x.event & kEventFault) return;
    uint64_t address = base[l] + static_cast<uint64_t>(in.imm);
    Cta* owner = nullptr;  // arrive and complete_tx may name another CTA's barrier
    uint32_t off = x.shared_offset(in.space, address, 8, l, in, &owner);
    if (off == UINT32_MAX) return;
    if (off % 8 != 0) {
      x.fault(in, l, "misaligned", address, "an mbarrier object must be 8-byte aligned");
      return;
    }
    SyncEvent e;
    if (x.observer != nullptr) [[unlikely]] {
      e = sync_event(x, SyncKind::MbarrierInit, in, 1u << l);
      e.owner = owner->rank;
      e.id = off;
    }
    if (op == Init) {
      uint32_t count = static_cast<uint32_t>(x.reg(o[1])[l]);
      owner->mbarriers[off] = Mbarrier{count, count, 0, 0};
      if (x.observer != nullptr) [[unlikely]] {
        e.count = count;
        x.observer->sync(e);
      }
      return;
    }
    Mbarrier* m = find_mbarrier(x, *owner, in, off, l);
    if (m == nullptr) return;
    if (op != ExpectTx && op != Inval && op != TestWait && op != TryWait) {
      e.kind = op == CompleteTx ? SyncKind::MbarrierCompleteTx : SyncKind::MbarrierArrive;
    }
    switch (op) {
      case Arrive:
      case ArriveExpectTx:
      case ArriveDrop: {
        uint32_t count = 1;
        if (o[2] != UINT32_MAX) {
          if (op == ArriveExpectTx) {
            m->tx += static_cast<int64_t>(static_cast<uint32_t>(x.reg(o[2])[l]));
          } else {
            count = static_cast<uint32_t>(x.reg(o[2])[l]);
          }
        }
        if (o[0] != UINT32_MAX) x.reg(o[0])[l] = m->phase;
        if (op == ArriveDrop && m->expected > 0) --m->expected;
        if (x.observer != nullptr) [[unlikely]] {
          e.count = count;
          e.drop = op == ArriveDrop;
          if (op == ArriveExpectTx && o[2] != UINT32_MAX) {
            e.tx_bytes = static_cast<uint32_t>(x.reg(o[2])[l]);
          }
          e.pending = m->pending;
          e.tx = m->tx;
        }
        mbarrier_arrive(*m, count);
        if (x.observer != nullptr) [[unlikely]] {
          e.phase = m->phase;
          x.observer->sync(e);
        }
        break;
      }
      case ExpectTx:
        m->tx += static_cast<int64_t>(static_cast<uint32_t>(x.reg(o[1])[l]));
        if (x.observer != nullptr) [[unlikely]] {
          e.kind = SyncKind::MbarrierExpectTx;
          e.count = static_cast<uint32_t>(x.reg(o[1])[l]);
          e.phase = m->phase;
          x.observer->sync(e);
        }
        break;
      case CompleteTx:
        mbarrier_complete_tx(*m, static_cast<int64_t>(static_cast<uint32_t>(x.reg(o[1])[l])));
        if (x.observer != nullptr) [[unlikely]] {
          e.count = static_cast<uint32_t>(x.reg(o[1])[l]);
          e.phase = m->phase;
          x.observer->sync(e);
        }
        break;
      case Inval:
        if (x.observer != nullptr) [[unlikely]] {
          e.kind = SyncKind::MbarrierInval;
          e.phase = m->phase;
          e.pending = m->pending;
          e.tx = m->tx;
          x.observer->sync(e);
        }
        x.cta->mbarriers.erase(off);
        break;
      default: {
        uint64_t token = x.reg(o[2])[l];
        bool complete = (in.flags & 1) ? (m->phase & 1) != (token & 1) : m->phase > token;
        if (x.observer != nullptr) [[unlikely]] {
          e.count = static_cast<uint32_t>(token);
          e.parity = in.flags & 1;
          e.pending = m->pending;
          e.tx = m->tx;
        }
        if (complete) {
          done |= 1u << l;
          if (x.observer != nullptr) [[unlikely]] {
            e.kind = SyncKind::MbarrierWait;
            e.phase = (in.flags & 1) ? m->phase - 1 : static_cast<uint32_t>(token);
            x.observer->sync(e);
          }
        } else {
          any_waiting = true;
          if (x.observer != nullptr) [[unlikely]] {
            e.kind = SyncKind::MbarrierWaitPending;
            e.phase = m->phase;  // the phase in progress
            x.observer->sync(e);
          }
        }
      }
    }
  });
  if (op == TestWait || op == TryWait) {
    x.set_pred(o[0], mask, done);
    if (any_waiting) x.event |= kEventYield;  // let the producers run
  }
}

// The address operand and its offset.
bool push_address(Decoder& d, const ptx::Operand& op, Inst& out) {
  Address a = d.address(op);
  out.imm = a.offset;
  d.push(a.base);
  return true;
}

}  // namespace

Mbarrier* find_mbarrier(Exec& x, Cta& cta, const Inst& in, uint32_t offset, uint32_t lane) {
  auto it = cta.mbarriers.find(offset);
  if (it == cta.mbarriers.end()) {
    if (x.observer != nullptr) [[unlikely]] {
      SyncEvent e = sync_event(x, SyncKind::MbarrierUninitialized, in, 1u << lane);
      e.owner = cta.rank;
      e.id = offset;
      x.observer->sync(e);
    }
    x.fault(in, lane, "invalid_launch", offset,
            "mbarrier at shared offset " + std::to_string(offset) +
                " is used before mbarrier.init; initialize it (and fence.mbarrier_init / "
                "__syncthreads) before any thread arrives or waits on it");
    return nullptr;
  }
  return &it->second;
}

void mbarrier_arrive(Mbarrier& m, uint32_t count) {
  m.pending = count >= m.pending ? 0 : m.pending - count;
  if (m.pending == 0 && m.tx <= 0) {
    ++m.phase;
    m.pending = m.expected;
    m.tx = 0;
  }
}

void mbarrier_complete_tx(Mbarrier& m, int64_t bytes) {
  m.tx -= bytes;
  if (m.pending == 0 && m.tx <= 0) {
    ++m.phase;
    m.pending = m.expected;
    m.tx = 0;
  }
}

bool decode_bulk(Decoder& d, const ptx::Instruction& in, Inst& out);

bool decode_async(Decoder& d, const ptx::Instruction& in, Inst& out) {
  out.klass = InstClass::AsyncCopy;
  size_t n = in.operands.size();
  if (in.opcode == Opcode::Cp) {
    if (!in.has_modifier("async")) return false;
    if (in.has_modifier("bulk")) return decode_bulk(d, in, out);
    if (in.has_modifier("commit_group")) {
      out.fn = &commit_group;
      return true;
    }
    if (in.has_modifier("wait_group") || in.has_modifier("wait_all")) {
      out.flags = in.has_modifier("wait_all") ? 1 : 0;
      if (!out.flags) {
        if (n != 1 || in.operands[0].kind != OperandKind::Immediate) return false;
        out.imm = in.operands[0].number.as_int();
      }
      out.fn = &wait_group;
      return true;
    }
    if (in.has_modifier("mbarrier")) {  // cp.async.mbarrier.arrive{.noinc}.shared.b64 [mbar]
      if (n != 1) return false;
      out.flags = in.has_modifier("noinc") ? 1 : 0;
      out.space = space_of(in.state_space());
      push_address(d, in.operands[0], out);
      out.fn = &cp_async_mbarrier_arrive;
      return true;
    }
    // cp.async.{ca,cg}.shared{::cta}.global [dst], [src], cp-size{, src-size}{, policy}
    if (n < 3 || in.operands[2].kind != OperandKind::Immediate) return false;
    int64_t size = in.operands[2].number.as_int();
    if (size != 4 && size != 8 && size != 16) return false;
    if (n >= 4 && d.is_predicate(in.operands[3])) {
      d.fail("cp.async with an ignore-src predicate is not supported yet");
      return false;
    }
    out.width = static_cast<uint8_t>(size);
    std::vector<ptx::StateSpace> spaces = in.state_spaces();
    out.space = space_of(spaces.front());
    push_address(d, in.operands[0], out);
    Address src = d.address(in.operands[1]);
    out.target = static_cast<uint32_t>(static_cast<int32_t>(src.offset));
    d.push(src.base);
    d.push(n >= 4 ? d.value(in.operands[3], Type::U32) : UINT32_MAX);
    out.fn = &cp_async;
    return true;
  }
  // mbarrier
  out.klass = InstClass::Barrier;
  out.space = space_of(in.state_space());
  bool expect = in.has_modifier("expect_tx");
  if (in.has_modifier("init")) {
    if (n != 2) return false;
    out.mode = Init;
    push_address(d, in.operands[0], out);
    d.push(d.value(in.operands[1], Type::U32));
  } else if (in.has_modifier("arrive") || in.has_modifier("arrive_drop")) {
    out.mode = in.has_modifier("arrive_drop") ? ArriveDrop : expect ? ArriveExpectTx : Arrive;
    if (n < 2 || n > 3) return false;
    const ptx::Operand& state = in.operands[0];
    d.push(state.kind == OperandKind::Sink ? UINT32_MAX : d.value(state, Type::B64));
    push_address(d, in.operands[1], out);
    d.push(n == 3 ? d.value(in.operands[2], Type::U32) : UINT32_MAX);
    if (in.has_modifier("shared::cluster") && state.kind != OperandKind::Sink) return false;
  } else if (expect || in.has_modifier("complete_tx")) {
    if (n != 2) return false;
    out.mode = expect ? ExpectTx : CompleteTx;
    push_address(d, in.operands[0], out);
    d.push(d.value(in.operands[1], Type::U32));
  } else if (in.has_modifier("inval")) {
    if (n != 1) return false;
    out.mode = Inval;
    push_address(d, in.operands[0], out);
  } else if (in.has_modifier("test_wait") || in.has_modifier("try_wait")) {
    if (n < 3) return false;
    out.mode = in.has_modifier("test_wait") ? TestWait : TryWait;
    out.flags = in.has_modifier("parity") ? 1 : 0;
    d.push(d.predicate(in.operands[0]));
    push_address(d, in.operands[1], out);
    d.push(d.value(in.operands[2], Type::B64));
  } else {
    return false;
  }
  out.fn = &mbarrier;
  return true;
}

}  // namespace kiln::sim
