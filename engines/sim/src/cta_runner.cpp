#include "cta_runner.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "barrier.h"
#include "observe.h"
#include "special_registers.h"

namespace kiln::sim {

namespace {

constexpr uint64_t kSlice = 1u << 14;  // warp-instructions before the next warp gets a turn
// Priority schedules: a turn ends at the warp's next synchronization operation, or after this
// many warp-instructions without one; a warp that took this many turns in a row is passed over
// once, so that a warp spinning on a flag lets the others run.
constexpr uint64_t kStepSlice = 1u << 12;
constexpr uint32_t kMaxStreak = 64;

uint64_t bytes_moved(const Counters& c) {
  uint64_t sum = 0;
  for (uint64_t b : c.bytes) sum += b;
  return sum;
}

// For an observer (synccheck): where each blocked warp waits, before the deadlock fault.
void observe_stuck(Exec& x, const std::vector<std::unique_ptr<Cta>>& ctas,
                   const std::vector<std::pair<Cta*, Warp*>>& spinning) {
  for (const std::unique_ptr<Cta>& cta : ctas) {
    for (uint32_t id = 0; id < cta->barriers.size(); ++id) {
      const NamedBarrier& b = cta->barriers[id];
      for (uint32_t w : b.waiting) {
        SyncEvent e;
        e.kind = SyncKind::Stuck;
        e.cta = cta->rank;
        e.warp = w;
        e.mask = cta->warps[w].live;
        e.id = id;
        e.pc = cta->warps[w].pc - 1;
        e.count = b.arrived;
        e.expected = b.expected != 0 ? b.expected : cta->live_threads;
        x.observer->sync(e);
      }
    }
  }
  for (const auto& [rank, w] : x.cluster_barrier->waiting) {
    SyncEvent e;
    e.kind = SyncKind::Stuck;
    e.cta = rank;
    e.warp = w;
    e.id = 16;
    e.pc = x.cluster_ctas[rank]->warps[w].pc - 1;
    e.count = x.cluster_barrier->arrived;
    x.observer->sync(e);
  }
  for (const auto& [cta, w] : spinning) {
    SyncEvent e;
    e.kind = SyncKind::Stuck;
    e.cta = cta->rank;
    e.warp = w->index;
    e.mask = w->live;
    e.on_mbarrier = true;
    e.pc = w->pc;
    x.observer->sync(e);
  }
}

// The cluster finished: mbarriers still initialized, with their state (synccheck looks for
// transaction bytes that never arrived and phases left half done).
void observe_left_mbarriers(Exec& x, const std::vector<std::unique_ptr<Cta>>& ctas) {
  for (const std::unique_ptr<Cta>& cta : ctas) {
    for (const auto& [offset, m] : cta->mbarriers) {
      SyncEvent e;
      e.kind = SyncKind::MbarrierLeft;
      e.cta = e.owner = cta->rank;
      e.id = offset;
      e.phase = m.phase;
      e.expected = m.expected;
      e.pending = m.pending;
      e.tx = m.tx;
      x.observer->sync(e);
    }
  }
}

}  // namespace

CtaRunner::CtaRunner(Exec& exec, const RunLimits& limits)
    : x_(exec),
      limits_(limits),
      slice_(kSlice),
      random_(limits.schedule.seed),
      start_(std::chrono::steady_clock::now()) {
  const WarpOrder order = limits_.schedule.order;
  if (x_.observer != nullptr && (order == WarpOrder::Pct || order == WarpOrder::Exhaustive))
    priority_ = std::make_unique<PrioritySchedule>(limits_.schedule);
}

void CtaRunner::set_up(Dim3 first) {
  const Program& p = *x_.program;
  const LaunchConfig& c = x_.config;
  uint32_t threads = c.block.x * c.block.y * c.block.z;
  uint32_t warps = (threads + 31) / 32;
  uint32_t size = c.cluster.x * c.cluster.y * c.cluster.z;
  while (ctas_.size() < size) ctas_.push_back(std::make_unique<Cta>());
  ctas_.resize(size);
  x_.cluster_ctas.clear();
  cluster_barrier_ = ClusterBarrier{};
  x_.cluster_barrier = &cluster_barrier_;
  for (uint32_t rank = 0; rank < size; ++rank) {
    Cta& cta = *ctas_[rank];
    cta.rank = rank;
    cta.id = {first.x + rank % c.cluster.x, first.y + (rank / c.cluster.x) % c.cluster.y,
              first.z + rank / (c.cluster.x * c.cluster.y)};
    cta.live_threads = threads;
    cta.warps.assign(warps, Warp{});
    cta.regs.assign(static_cast<size_t>(warps) * p.value_slots * 32, 0);
    cta.preds.assign(static_cast<size_t>(warps) * std::max<uint32_t>(1, p.predicate_slots), 0);
    cta.shared.assign(x_.shared_bytes, 0);
    cta.local.assign(static_cast<size_t>(warps) * 32 * p.local_bytes, 0);
    for (NamedBarrier& b : cta.barriers) b = NamedBarrier{};
    cta.mbarriers.clear();
    cta.observer = x_.observer;
    x_.cluster_ctas.push_back(&cta);
    x_.cta = &cta;
    for (uint32_t i = 0; i < warps; ++i) {
      Warp& w = cta.warps[i];
      w.index = i;
      uint32_t lanes = std::min<uint32_t>(32, threads - i * 32);
      w.live = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
      w.stack.push_back({0, kNoReconverge, w.live});
      w.regs = cta.regs.data() + static_cast<size_t>(i) * p.value_slots * 32;
      w.preds =
          cta.preds.data() + static_cast<size_t>(i) * std::max<uint32_t>(1, p.predicate_slots);
      x_.warp = &w;
      fill_constants(x_, cta, w, limits_.multiprocessors);
    }
  }
  order_.clear();
  for (const std::unique_ptr<Cta>& cta : ctas_) {
    for (Warp& w : cta->warps) order_.emplace_back(cta.get(), &w);
  }
  if (limits_.schedule.order == WarpOrder::Reversed) std::reverse(order_.begin(), order_.end());
  if (x_.observer != nullptr) {
    std::vector<Dim3> ids;
    for (const std::unique_ptr<Cta>& cta : ctas_) ids.push_back(cta->id);
    x_.observer->cluster_begin(ids);
  }
}

// Random: a fresh permutation of the warps and a short slice, so that warps interleave at
// other points than round-robin in long slices would let them.
void CtaRunner::next_round() {
  if (limits_.schedule.order != WarpOrder::Random) return;
  std::shuffle(order_.begin(), order_.end(), random_);
  slice_ = 1 + random_() % 256;
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
  yielded_ = false;
  auto& by_class = x.counters.by_class;
  while (n < slice_) {
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
      if (event & kEventExit) {
        if (x.observer != nullptr && (mask & ~w.live) != 0) [[unlikely]] {
          SyncEvent e = sync_event(x, SyncKind::ThreadExit, in, mask & ~w.live);
          x.observer->sync(e);
        }
        release_completed_barriers(*x.cta);
        try_release_cluster_barrier(x);
      }
      if (w.state != WarpState::Ready) break;
      while (w.pc == w.stack.back().reconverge) {
        w.stack.pop_back();
        w.pc = w.stack.back().pc;
      }
      yielded_ = (event & kEventYield) != 0;
      if (event & (kEventYield | kEventStep)) break;
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

bool CtaRunner::turn_ok(Warp& w) {
  if (!x_.faults.empty()) {
    if (x_.observer != nullptr && x_.faults.front().kind == "barrier_divergence") {
      SyncEvent e = sync_event(x_, SyncKind::PartialWarp, x_.program->code[w.pc - 1],
                               w.stack.empty() ? 0 : w.stack.back().mask);
      x_.observer->sync(e);
    }
    return false;
  }
  return !over_limits(w);
}

// One synchronization step at a time, the highest-priority warp that can run first. A warp
// whose turn spun (it came back to the pc it started from without moving memory: a failed
// mbarrier wait in a loop) is parked until another warp takes a step that is not a spin; when
// every live warp is parked or waits at a barrier, none can proceed (deadlock).
bool CtaRunner::run_by_priority() {
  const size_t n = order_.size();
  PrioritySchedule& schedule = *priority_;
  schedule.begin_cluster(static_cast<uint32_t>(n));
  x_.stop_at_sync = true;
  std::vector<char> parked(n, 0), eligible(n, 0);
  size_t last = n;
  uint32_t streak = 0;
  auto finish = [&](bool ok) {
    x_.stop_at_sync = false;
    x_.observer->cluster_schedule(schedule.cluster());
    return ok;
  };
  slice_ = kStepSlice;
  for (;;) {
    bool any_live = false;
    for (size_t i = 0; i < n; ++i) {
      const Warp& w = *order_[i].second;
      any_live |= w.state != WarpState::Done;
      eligible[i] = w.state == WarpState::Ready && !parked[i];
    }
    if (!any_live) {
      observe_left_mbarriers(x_, ctas_);
      return finish(true);
    }
    const int pick = schedule.pick(eligible);
    if (pick < 0) {
      std::vector<std::pair<Cta*, Warp*>> spinning;
      for (size_t i = 0; i < n; ++i) {
        if (parked[i] && order_[i].second->state == WarpState::Ready) spinning.push_back(order_[i]);
      }
      observe_stuck(x_, ctas_, spinning);
      report_deadlock(!spinning.empty());
      return finish(false);
    }
    const size_t i = static_cast<size_t>(pick);
    auto [cta, warp] = order_[i];
    Warp& w = *warp;
    x_.cta = cta;
    const uint32_t pc = w.pc;
    const uint64_t bytes = bytes_moved(x_.counters);
    const uint64_t done = x_.counters.warp_instructions;
    run_warp(w);
    schedule.stepped(static_cast<uint32_t>(i));
    if (!turn_ok(w)) return finish(false);
    // A wait that failed again where the turn started (a wait that succeeded is progress).
    const bool spun = yielded_ && w.state == WarpState::Ready && w.pc == pc &&
                      x_.counters.warp_instructions - done < slice_ &&
                      bytes_moved(x_.counters) == bytes;
    streak = i == last ? streak + 1 : 0;
    last = i;
    if (spun || streak >= kMaxStreak) {
      parked[i] = 1;
      streak = 0;
    } else {
      std::fill(parked.begin(), parked.end(), 0);
    }
  }
}

bool CtaRunner::run(Dim3 first) {
  set_up(first);
  if (priority_ != nullptr) return run_by_priority();
  // With an observer, a round in which every running warp only spun (it yielded at the pc it
  // started from, moving no memory: a failed mbarrier wait in a loop) is a deadlock too: no
  // later round can differ. Without one, such a kernel runs into its budget, as it always did.
  std::vector<std::pair<Cta*, Warp*>> spinning;
  for (;;) {
    bool any_live = false, progressed = false, all_spin = x_.observer != nullptr;
    spinning.clear();
    next_round();
    for (const auto& [cta, warp] : order_) {
      Warp& w = *warp;
      if (w.state == WarpState::Done) continue;
      x_.cta = cta;
      any_live = true;
      if (w.state != WarpState::Ready) continue;
      const uint32_t pc = w.pc;
      const uint64_t bytes = all_spin ? bytes_moved(x_.counters) : 0;
      const uint64_t done = x_.counters.warp_instructions;
      run_warp(w);
      progressed = true;
      if (!turn_ok(w)) return false;
      if (all_spin) {
        all_spin = w.state == WarpState::Ready && w.pc == pc &&
                   x_.counters.warp_instructions - done < slice_ &&
                   bytes_moved(x_.counters) == bytes;
        spinning.emplace_back(cta, &w);
      }
    }
    if (!any_live) {
      if (x_.observer != nullptr) observe_left_mbarriers(x_, ctas_);
      return true;
    }
    if (!progressed || (all_spin && !spinning.empty())) {
      if (x_.observer != nullptr)
        observe_stuck(x_, ctas_, progressed ? spinning : decltype(spinning){});
      report_deadlock(progressed);
      return false;
    }
  }
}

void CtaRunner::report_deadlock(bool spinning) {
  std::string waiting;
  Warp* first = nullptr;
  for (const std::unique_ptr<Cta>& cta : ctas_) {
    for (Warp& w : cta->warps) {
      if (w.state == WarpState::AtBarrier && first == nullptr) {
        first = &w;
        x_.cta = cta.get();
      }
    }
    std::string here = describe_waiting(*cta);
    if (here.empty()) continue;
    if (!waiting.empty()) waiting += "; ";
    waiting += ctas_.size() > 1 ? "CTA rank " + std::to_string(cta->rank) + ": " + here : here;
  }
  std::string cluster = describe_cluster_waiting(x_);
  if (!cluster.empty()) waiting += (waiting.empty() ? "" : "; ") + cluster;
  if (spinning) {
    // Every warp still running spins on an mbarrier wait that nothing left can complete.
    for (const auto& [cta, w] : order_) {
      if (w->state != WarpState::Ready) continue;
      if (first == nullptr) {
        first = w;
        x_.cta = cta;
      }
      if (!waiting.empty()) waiting += "; ";
      waiting += (ctas_.size() > 1 ? "CTA rank " + std::to_string(cta->rank) + " " : "") + "warp " +
                 std::to_string(w->index) +
                 " spins on an mbarrier wait (test_wait/try_wait) that no warp can complete";
    }
  }
  x_.warp = first;
  const Inst& here = x_.program->code[first->pc - 1];
  x_.fault(here, static_cast<uint32_t>(std::countr_zero(first->live | 0x80000000u)), "deadlock", 0,
           "every live warp waits and none can proceed: " + waiting +
               "; check that all threads reach each barrier (an early return before "
               "__syncthreads leaves the count short), that named-barrier counts match, and "
               "that every mbarrier phase waited on gets its arrivals and transaction bytes");
}

}  // namespace kiln::sim
