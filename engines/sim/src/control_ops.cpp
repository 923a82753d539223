// Control flow and CTA synchronization: bra (with the reconvergence stack), ret/exit, trap,
// bar/barrier, and the instructions that only schedule (nanosleep, setmaxnreg, griddepcontrol).
#include <algorithm>
#include <bit>
#include <string>

#include "barrier.h"
#include "decoder.h"
#include "exec.h"
#include "observe.h"

namespace kiln::sim {

namespace {

using ptx::Opcode;

uint32_t first_lane(uint32_t mask) {
  return mask == 0 ? 0 : static_cast<uint32_t>(std::countr_zero(mask));
}

void branch(Exec& x, const Inst& in, uint32_t taken) {
  Warp& w = *x.warp;
  uint32_t active = w.stack.back().mask;
  if (taken == active) {
    w.pc = in.target;
    return;
  }
  if (taken == 0) return;
  ++x.counters.divergent_branches;
  uint32_t fall = w.pc;
  uint32_t rpc = in.reconverge;
  w.stack.back().pc = rpc;
  if (fall != rpc) w.stack.push_back({fall, rpc, active & ~taken});
  if (in.target != rpc) w.stack.push_back({in.target, rpc, taken});
  w.pc = w.stack.back().pc;
}

void trap(Exec& x, const Inst& in, uint32_t mask) {
  if (mask == 0) return;
  x.fault(in, first_lane(mask), "trap", 0,
          "the kernel executed trap (an assert or __trap() failed); look at the condition "
          "guarding it at the reported line");
}

void no_op(Exec&, const Inst&, uint32_t) {}

void yield(Exec& x, const Inst&, uint32_t) { x.event |= kEventYield; }

// bar.warp.sync: the lanes are already in step; only an observer cares.
void warp_sync(Exec& x, const Inst& in, uint32_t mask) {
  if (x.observer != nullptr && mask != 0) [[unlikely]] {
    x.observer->sync(sync_event(x, SyncKind::WarpSync, in, mask));
  }
}

// expected: the instruction's thread count (0: every thread of the CTA); count: the threads
// that had arrived at the barrier before this arrival.
void observe_arrival(Exec& x, const Inst& in, uint32_t mask, uint32_t id, uint32_t count) {
  SyncEvent e = sync_event(x, SyncKind::BarrierArrive, in, mask);
  e.id = id;
  e.waits = in.width == 1;
  e.expected = count;
  e.count = id < 16 ? x.cta->barriers[id].arrived : 0;
  x.observer->sync(e);
}

void setmaxnreg(Exec& x, const Inst& in, uint32_t mask) {
  if (mask == 0) return;
  if (in.imm < 24 || in.imm > 256 || in.imm % 8 != 0) {
    x.fault(in, first_lane(mask), "invalid_launch", 0,
            "setmaxnreg needs a register count in 24..256 that is a multiple of 8, got " +
                std::to_string(in.imm));
  }
}

// bar.sync / barrier.sync / bar.arrive: width = 1 when the warp waits.
void bar(Exec& x, const Inst& in, uint32_t mask) {
  if (mask == 0) return;
  Warp& w = *x.warp;
  const uint32_t* all_ops = x.ops(in);
  // bar.red: d first and the predicate last around the id and count.
  bool red = in.mode != 0;
  const uint32_t* ops = red ? all_ops + 1 : all_ops;
  uint32_t id_and_count = red ? in.nops - 2u : in.nops;
  uint32_t lane = first_lane(mask);
  uint32_t id = in.target == 16 ? 16 : static_cast<uint32_t>(x.reg(ops[0])[lane]);
  uint32_t count = id_and_count > 1 ? static_cast<uint32_t>(x.reg(ops[1])[lane]) : 0;
  if (mask != w.live) {
    x.fault(
        in, lane, "barrier_divergence", 0,
        "warp " + std::to_string(w.index) + " reached barrier " + std::to_string(id) +
            " with only some of its threads (active mask 0x" +
            [&] {
              char buf[16];
              std::snprintf(buf, sizeof buf, "%08x", mask);
              return std::string(buf);
            }() +
            "); every thread of a warp must reach the same barrier, so move the barrier "
            "out of the divergent branch");
    return;
  }
  if (id >= 16 && in.target != 16) {
    x.fault(in, lane, "invalid_launch", 0,
            "barrier id " + std::to_string(id) + " is out of range; named barriers are 0..15");
    return;
  }
  if (count != 0 && (count % 32 != 0)) {
    x.fault(in, lane, "invalid_launch", 0,
            "barrier thread count " + std::to_string(count) +
                " is not a multiple of the warp size (32)");
    return;
  }
  if (x.observer != nullptr) [[unlikely]]
    observe_arrival(x, in, mask, id, count);
  if (in.target == 16) {  // barrier.cluster.wait: every thread of the cluster
    ClusterBarrier& cb = *x.cluster_barrier;
    cb.arrived += static_cast<uint32_t>(std::popcount(mask));
    w.state = WarpState::AtBarrier;
    cb.waiting.push_back({x.cta->rank, w.index});
    x.event |= kEventBlock;
    try_release_cluster_barrier(x);
    return;
  }
  NamedBarrier& b = x.cta->barriers[id];
  if (count != 0) b.expected = count;
  b.arrived += static_cast<uint32_t>(std::popcount(mask));
  if (red) {
    uint32_t p = x.pred_mask(all_ops[in.nops - 1]) & mask;
    b.red_popc += static_cast<uint32_t>(std::popcount(p));
    b.red_and = b.red_and && p == mask;
    b.red_or = b.red_or || p != 0;
    b.reductions.push_back({w.index, all_ops[0], mask, in.mode});
  }
  if (in.width == 1) {
    w.state = WarpState::AtBarrier;
    b.waiting.push_back(w.index);
    x.event |= kEventBlock;
  }
  try_release_barrier(*x.cta, id);
}

void bra(Exec& x, const Inst& in, uint32_t mask) { branch(x, in, mask); }

// brx.idx index, targets: ops[0] is the index slot, ops[1..] the target pcs. Lanes that pick
// different targets diverge, each group on its own entry, reconverging at the post-dominator.
void brx(Exec& x, const Inst& in, uint32_t mask) {
  if (mask == 0) return;
  const uint32_t* o = x.ops(in);
  const uint64_t* index = x.reg(o[0]);
  uint32_t targets = in.nops - 1u;
  uint32_t groups[32] = {};  // lanes per target (at most 32 distinct targets are used)
  uint32_t target_of[32] = {};
  uint32_t n = 0;
  bool bad = false;
  for_lanes(mask, [&](uint32_t l) {
    if (bad) return;
    if (index[l] >= targets) {
      x.fault(in, l, "out_of_bounds", index[l],
              "brx.idx index " + std::to_string(index[l]) + " is outside its list of " +
                  std::to_string(targets) + " targets");
      bad = true;
      return;
    }
    uint32_t pc = o[1 + index[l]];
    uint32_t g = 0;
    while (g < n && target_of[g] != pc) ++g;
    if (g == n) target_of[n++] = pc;
    groups[g] |= 1u << l;
  });
  if (bad) return;
  Warp& w = *x.warp;
  uint32_t active = w.stack.back().mask;
  if (n == 1 && groups[0] == active) {
    w.pc = target_of[0];
    return;
  }
  ++x.counters.divergent_branches;
  uint32_t rpc = in.reconverge;
  uint32_t fall = w.pc;
  w.stack.back().pc = rpc;
  uint32_t rest = active & ~mask;  // lanes guarded off fall through
  if (rest != 0 && fall != rpc) w.stack.push_back({fall, rpc, rest});
  for (uint32_t g = 0; g < n; ++g) {
    if (target_of[g] != rpc) w.stack.push_back({target_of[g], rpc, groups[g]});
  }
  w.pc = w.stack.back().pc;
}

}  // namespace

void exit_handler(Exec& x, const Inst&, uint32_t mask) {
  if (mask == 0) return;
  Warp& w = *x.warp;
  w.live &= ~mask;
  x.cta->live_threads -= static_cast<uint32_t>(std::popcount(mask));
  for (StackEntry& e : w.stack) e.mask &= ~mask;
  while (!w.stack.empty() && w.stack.back().mask == 0) {
    w.stack.pop_back();
    if (!w.stack.empty()) w.pc = w.stack.back().pc;
  }
  if (w.stack.empty()) {
    w.calls.clear();
  } else {
    finish_calls(x);
  }
  if (w.stack.empty()) w.state = WarpState::Done;
  x.event |= kEventExit;
}

// call{.uni} (results), f, (arguments): results and arguments are the caller's .param
// variables.
bool decode_call(Decoder& d, const ptx::Instruction& in, Inst& out) {
  const auto& ops = in.operands;
  size_t i = 0;
  CallSite site;
  auto offsets = [&](const ptx::Operand& list, std::vector<uint32_t>& into) {
    for (const ptx::Operand& e : list.elements) {
      uint32_t offset = e.kind == ptx::OperandKind::Symbol ? d.local_offset(e.name) : UINT32_MAX;
      if (offset == UINT32_MAX) {
        d.fail("call arguments and results must be .param variables of the caller");
        return false;
      }
      into.push_back(offset + static_cast<uint32_t>(e.offset));
    }
    return true;
  };
  if (i < ops.size() && ops[i].kind == ptx::OperandKind::List) {
    if (!offsets(ops[i++], site.result_offsets)) return false;
  }
  if (i >= ops.size() || ops[i].kind != ptx::OperandKind::Symbol) {
    d.fail("indirect calls (through a register) are not supported yet");
    return false;
  }
  site.callee = ops[i++].name;
  if (i < ops.size() && ops[i].kind == ptx::OperandKind::List) {
    if (!offsets(ops[i++], site.argument_offsets)) return false;
  }
  if (i != ops.size()) {
    d.fail("calls with a prototype or target list are not supported yet");
    return false;
  }
  out.target = d.add_call_site(std::move(site));
  out.fn = &call_handler;
  return true;
}

bool decode_control(Decoder& d, const ptx::Instruction& in, Inst& out) {
  out.klass = InstClass::Control;
  switch (in.opcode) {
    case Opcode::Bra: {
      if (in.operands.size() != 1 || in.operands[0].kind != ptx::OperandKind::Label) return false;
      const ptx::Label& label = d.function().labels[in.operands[0].label];
      out.target = d.code_base() + label.target;
      out.fn = &bra;
      return true;
    }
    case Opcode::Brx: {
      // brx.idx index, tlist: tlist labels a .branchtargets directive of code labels.
      if (in.operands.size() != 2 || in.operands[1].kind != ptx::OperandKind::Label) return false;
      const ptx::Function& f = d.function();
      const ptx::Label& list = f.labels[in.operands[1].label];
      if (list.kind != ptx::LabelKind::BranchTargets || list.directive >= f.directives.size()) {
        d.fail("brx.idx needs a .branchtargets list");
        return false;
      }
      d.push(d.value(in.operands[0], ptx::Type::U32));
      for (const std::string& name : f.directives[list.directive].targets) {
        auto it = std::find_if(f.labels.begin(), f.labels.end(), [&](const ptx::Label& l) {
          return l.kind == ptx::LabelKind::Code && l.name == name;
        });
        if (it == f.labels.end()) {
          d.fail("brx.idx target '" + name + "' is not a label of this function");
          return false;
        }
        d.push(d.code_base() + it->target);
      }
      out.fn = &brx;
      return true;
    }
    case Opcode::Ret:
    case Opcode::Exit:
      out.fn =
          in.opcode == Opcode::Ret && !d.function().is_kernel() ? &return_handler : &exit_handler;
      return true;
    case Opcode::Call:
      return decode_call(d, in, out);
    case Opcode::Trap:
    case Opcode::Brkpt:
      out.fn = &trap;
      return true;
    case Opcode::Nanosleep:
      out.fn = &yield;
      out.klass = InstClass::Other;
      return true;
    case Opcode::Pmevent:
    case Opcode::Griddepcontrol:
      out.fn = &no_op;
      out.klass = InstClass::Other;
      return true;
    case Opcode::Setmaxnreg:
      if (in.operands.size() != 1 || in.operands[0].kind != ptx::OperandKind::Immediate) {
        return false;
      }
      out.imm = in.operands[0].number.as_int();
      out.fn = &setmaxnreg;
      out.klass = InstClass::Other;
      return true;
    case Opcode::Bar:
    case Opcode::Barrier: {
      out.klass = InstClass::Barrier;
      if (in.has_modifier("warp")) {  // bar.warp.sync: lanes of one warp, already in step
        out.fn = &warp_sync;
        return true;
      }
      if (in.has_modifier("red")) {
        // bar.red.popc.u32 d, a{, b}, {!}c / bar.red.{and,or}.pred p, a{, b}, {!}c
        size_t n = in.operands.size();
        if (n < 3 || n > 4) return false;
        out.mode = in.has_modifier("popc")  ? 1
                   : in.has_modifier("and") ? 2
                   : in.has_modifier("or")  ? 3
                                            : 0;
        if (out.mode == 0) return false;
        d.push(out.mode == 1 ? d.value(in.operands[0], ptx::Type::U32)
                             : d.predicate(in.operands[0]));
        for (size_t i = 1; i + 1 < n; ++i) d.push(d.value(in.operands[i], ptx::Type::U32));
        d.push(d.predicate(in.operands[n - 1]));
        out.width = 1;
        out.fn = &bar;
        return true;
      }
      bool cluster = in.has_modifier("cluster");
      bool arrive = in.has_modifier("arrive");
      bool sync = in.has_modifier("sync") || in.has_modifier("wait");
      if (!arrive && !sync) return false;
      if (cluster) {
        // A cluster of one CTA: arrive is a no-op, wait synchronizes the CTA.
        if (arrive) {
          out.fn = &no_op;
          return true;
        }
        out.target = 16;
        out.width = 1;
        out.fn = &bar;
        return true;
      }
      if (in.operands.empty() || in.operands.size() > 2) return false;
      for (const ptx::Operand& op : in.operands) d.push(d.value(op, ptx::Type::U32));
      out.width = sync ? 1 : 0;
      out.fn = &bar;
      return true;
    }
    default:
      return false;
  }
}

}  // namespace kiln::sim
