#include "cta_runner.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "barrier.h"

namespace kiln::sim {

namespace {

constexpr uint64_t kSlice = 1u << 14;  // warp-instructions before the next warp gets a turn

uint32_t component_of(const Dim3& d, char c) { return c == 'y' ? d.y : c == 'z' ? d.z : d.x; }

}  // namespace

CtaRunner::CtaRunner(Exec& exec, const RunLimits& limits)
    : x_(exec), limits_(limits), start_(std::chrono::steady_clock::now()) {}

void CtaRunner::set_up(Dim3 id) {
  const Program& p = *x_.program;
  const LaunchConfig& c = x_.config;
  uint32_t threads = c.block.x * c.block.y * c.block.z;
  uint32_t warps = (threads + 31) / 32;
  cta_.id = id;
  cta_.live_threads = threads;
  cta_.warps.assign(warps, Warp{});
  cta_.regs.assign(static_cast<size_t>(warps) * p.value_slots * 32, 0);
  cta_.preds.assign(static_cast<size_t>(warps) * std::max<uint32_t>(1, p.predicate_slots), 0);
  cta_.shared.assign(x_.shared_bytes, 0);
  cta_.local.assign(static_cast<size_t>(warps) * 32 * p.local_bytes, 0);
  for (NamedBarrier& b : cta_.barriers) b = NamedBarrier{};
  cta_.mbarriers.clear();
  for (uint32_t i = 0; i < warps; ++i) {
    Warp& w = cta_.warps[i];
    w.index = i;
    uint32_t lanes = std::min<uint32_t>(32, threads - i * 32);
    w.live = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
    w.stack.push_back({0, kNoReconverge, w.live});
    w.regs = cta_.regs.data() + static_cast<size_t>(i) * p.value_slots * 32;
    w.preds = cta_.preds.data() + static_cast<size_t>(i) * std::max<uint32_t>(1, p.predicate_slots);
    fill_constants(w);
  }
  x_.cta = &cta_;
}

void CtaRunner::fill_constants(Warp& w) {
  using ptx::SpecialRegister;
  const LaunchConfig& c = x_.config;
  x_.warp = &w;
  for (const ConstantSlot& k : x_.program->constants) {
    uint64_t* r = w.regs + static_cast<size_t>(k.slot) * 32;
    if (k.kind == ConstantSlot::Kind::Value) {
      std::fill(r, r + 32, k.value);
      continue;
    }
    for (uint32_t lane = 0; lane < 32; ++lane) {
      Dim3 t = x_.thread_of(lane);
      uint64_t v = 0;
      switch (k.special) {
        case SpecialRegister::Tid:
          v = component_of(t, k.component);
          break;
        case SpecialRegister::Ntid:
          v = component_of(c.block, k.component);
          break;
        case SpecialRegister::Laneid:
          v = lane;
          break;
        case SpecialRegister::Warpid:
          v = w.index;
          break;
        case SpecialRegister::Nwarpid:
          v = cta_.warps.size();
          break;
        case SpecialRegister::Ctaid:
          v = component_of(cta_.id, k.component);
          break;
        case SpecialRegister::Nctaid:
          v = component_of(c.grid, k.component);
          break;
        case SpecialRegister::Smid: {
          uint64_t linear =
              cta_.id.x + static_cast<uint64_t>(c.grid.x) *
                              (cta_.id.y + static_cast<uint64_t>(c.grid.y) * cta_.id.z);
          v = linear % limits_.multiprocessors;
          break;
        }
        case SpecialRegister::Nsmid:
          v = limits_.multiprocessors;
          break;
        case SpecialRegister::LanemaskEq:
          v = 1u << lane;
          break;
        case SpecialRegister::LanemaskLe:
          v = lane == 31 ? 0xffffffffu : (2u << lane) - 1;
          break;
        case SpecialRegister::LanemaskLt:
          v = (1u << lane) - 1;
          break;
        case SpecialRegister::LanemaskGe:
          v = ~((1u << lane) - 1);
          break;
        case SpecialRegister::LanemaskGt:
          v = lane == 31 ? 0 : ~((2u << lane) - 1);
          break;
        case SpecialRegister::DynamicSmemSize:
          v = c.dynamic_shared_bytes;
          break;
        case SpecialRegister::TotalSmemSize:
        case SpecialRegister::AggrSmemSize:
          v = x_.shared_bytes;
          break;
        case SpecialRegister::Clusterid:
          v = component_of(cta_.id, k.component);
          break;
        case SpecialRegister::Nclusterid:
          v = component_of(c.grid, k.component);
          break;
        case SpecialRegister::ClusterNctaid:
          v = 1;
          break;
        case SpecialRegister::ClusterNctarank:
          v = 1;
          break;
        default:
          v = 0;
          break;  // cluster ranks 0, %gridid 0, reserved offsets 0, %envreg 0
      }
      r[lane] = v;
    }
  }
}

bool CtaRunner::over_limits(Warp& w) {
  uint64_t done = x_.counters.warp_instructions;
  const Inst& here = x_.program->code[std::min<size_t>(w.pc, x_.program->code.size() - 1)];
  uint32_t lane = w.live == 0 ? 0 : static_cast<uint32_t>(std::countr_zero(w.live));
  if (limits_.instruction_budget != 0 && done > limits_.instruction_budget) {
    x_.fault(here, lane, "budget", 0,
             "the launch ran " + std::to_string(done) + " warp-instructions, over the budget of " +
                 std::to_string(limits_.instruction_budget) +
                 "; the kernel may loop forever (check loop bounds and exit conditions, and "
                 "that spin-waits can finish), or use a smaller workload");
    return true;
  }
  if (limits_.time_limit_seconds > 0) {
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (seconds > limits_.time_limit_seconds) {
      x_.fault(here, lane, "time_limit", 0,
               "the launch ran " + std::to_string(seconds) + " s, over the limit of " +
                   std::to_string(limits_.time_limit_seconds) +
                   " s; the kernel may loop forever, or the workload is too large to simulate");
      return true;
    }
  }
  return false;
}

void CtaRunner::run_warp(Warp& w) {
  Exec& x = x_;
  x.warp = &w;
  x.regs = w.regs;
  x.preds = w.preds;
  const Inst* code = x.program->code.data();
  uint64_t& n = x.slice_steps;
  n = 0;
  uint64_t lanes = 0;
  auto& by_class = x.counters.by_class;
  while (n < kSlice) {
    const Inst& in = code[w.pc];
    uint32_t mask = w.stack.back().mask;
    if (in.guard != kNoGuard) mask &= x.pred_mask(in.guard);
    ++w.pc;
    in.fn(x, in, mask);
    ++n;
    uint32_t active = lane_count(mask);
    lanes += active;
    by_class[static_cast<size_t>(in.klass)] += active;
    if (x.event != kEventNone) {
      uint32_t event = x.event;
      x.event = kEventNone;
      if (event & kEventFault) break;
      if (event & kEventExit) release_completed_barriers(cta_);
      if (w.state != WarpState::Ready) break;
      while (w.pc == w.stack.back().reconverge) {
        w.stack.pop_back();
        w.pc = w.stack.back().pc;
      }
      if (event & kEventYield) break;
      continue;
    }
    while (w.pc == w.stack.back().reconverge) {
      w.stack.pop_back();
      w.pc = w.stack.back().pc;
    }
  }
  x.counters.warp_instructions += n;
  x.counters.lane_instructions += lanes;
  n = 0;
  if (limits_.independent_thread_scheduling && w.state == WarpState::Ready &&
      (x.event & kEventFault) == 0 && x.faults.empty()) {
    rotate_siblings(w);
  }
}

// Independent thread scheduling: the two divergent paths on top of the stack are siblings
// (same reconvergence point); letting the other one run when this one yields or uses up its
// slice gives every path of a warp forward progress, as Volta and later GPUs guarantee (a lane
// spinning on a flag that another lane of its warp sets then finishes).
void CtaRunner::rotate_siblings(Warp& w) {
  size_t n = w.stack.size();
  if (n < 3) return;
  StackEntry& top = w.stack[n - 1];
  StackEntry& below = w.stack[n - 2];
  if (top.reconverge != below.reconverge || below.pc == below.reconverge) return;
  top.pc = w.pc;
  std::swap(top, below);
  w.pc = w.stack.back().pc;
}

bool CtaRunner::run(Dim3 id) {
  set_up(id);
  for (;;) {
    bool any_live = false, progressed = false;
    for (Warp& w : cta_.warps) {
      if (w.state == WarpState::Done) continue;
      any_live = true;
      if (w.state != WarpState::Ready) continue;
      run_warp(w);
      progressed = true;
      if (!x_.faults.empty()) return false;
      if (over_limits(w)) return false;
    }
    if (!any_live) return true;
    if (!progressed) {
      Warp* first = nullptr;
      for (Warp& w : cta_.warps) {
        if (w.state == WarpState::AtBarrier) {
          first = &w;
          break;
        }
      }
      x_.warp = first;
      const Inst& here = x_.program->code[first->pc - 1];
      x_.fault(here, static_cast<uint32_t>(std::countr_zero(first->live | 0x80000000u)), "deadlock",
               0,
               "every live warp of the CTA waits and none can proceed: " + describe_waiting(cta_) +
                   "; check that all threads reach each barrier (an early return before "
                   "__syncthreads leaves the count short) and that named-barrier counts match");
      return false;
    }
  }
}

}  // namespace kiln::sim
