// SyncMonitor's rules: the mbarrier protocol and CTA barriers, checked on the events of the
// simulator as they happen. The model of an mbarrier mirrors the simulator's (an arrival
// lowers the pending count, expect_tx raises and complete_tx lowers the transaction bytes, a
// phase completes when both are done); the phases themselves come from the simulator's events.
#include <algorithm>
#include <bit>
#include <cstdio>
#include <optional>

#include "sync_monitor_impl.h"

namespace kiln::check {

using sim::SyncEvent;
using sim::SyncKind;
using syncmon::Mbarrier;
using syncmon::Op;
using syncmon::Raw;

namespace {

uint32_t thread_key(const SyncEvent& e, uint32_t lane) {
  return e.cta << 10 | (e.warp * 32 + lane);
}

uint32_t first_lane(uint32_t mask) {
  return mask == 0 ? 0 : static_cast<uint32_t>(std::countr_zero(mask));
}

// The phase a parity wait names: the first one after the thread's last wait with that parity.
// A thread's first wait names phase 0 (parity 0) or the phase before it (parity 1, which a
// fresh barrier reports complete: the producer's first wait on an "empty" barrier).
int64_t named_phase(int64_t last, bool odd) {
  int64_t next = last + 1;
  return ((next % 2 + 2) % 2 == (odd ? 1 : 0)) ? next : next + 1;
}

}  // namespace

Op SyncMonitor::Impl::op(const SyncEvent& e, uint32_t lane) const {
  Op o;
  o.valid = true;
  if (e.cta < ctas.size()) o.block = ctas[e.cta];
  o.linear = e.warp * 32 + lane;
  o.pc = e.pc;
  return o;
}

std::string SyncMonitor::Impl::hex(uint64_t v) const {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

void SyncMonitor::Impl::on_wait(const SyncEvent& e, Mbarrier& m, uint32_t lane, bool done) {
  const uint32_t key = thread_key(e, lane);
  const Op here = op(e, lane);
  // Completed phases, from the simulator: a pending wait reports the phase in progress, a
  // parity wait the last completed one.
  int64_t completed = std::max<int64_t>(m.phase, int64_t{e.count} + 1);  // token
  if (e.kind == SyncKind::MbarrierWaitPending) {
    completed = e.phase;
  } else if (e.parity) {
    completed = static_cast<uint32_t>(e.phase + 1);  // e.phase is -1 on a fresh barrier
  }
  m.phase = static_cast<uint32_t>(completed);
  int64_t named = e.count;  // a phase token names its phase
  if (e.parity) {
    auto it = m.last_wait.find(key);
    named = named_phase(it == m.last_wait.end() ? -2 : it->second, e.count & 1);
  }
  if (completed >= named + 2) {
    Raw r;
    r.kind = "phase_overrun";
    r.object = "mbarrier";
    r.id = e.id;
    r.site = here;
    r.earlier = m.completed_by[(named + 1) % 4];
    r.message = "a thread waits (parity " + std::to_string(e.count & 1) + ") for phase " +
                std::to_string(named) + " of the mbarrier at shared offset " + hex(e.id) +
                ", but the barrier already completed phase " + std::to_string(named + 1) +
                " after it (" + std::to_string(completed) +
                " phases completed): the barrier was reused before this waiter saw its phase, "
                "so the parity now names a later phase and the wait returns for the wrong data "
                "or never";
    r.fix =
        "do not let the producer re-arm a stage's mbarrier until every consumer has "
        "waited on its previous phase: give each stage an 'empty' mbarrier the consumers "
        "arrive on after their last read, and have the producer wait on it (flipping the "
        "parity each round) before it refills the stage";
    report(std::move(r));
  }
  // The simulator's own state at the wait.
  m.pending = e.pending;
  m.tx = e.tx;
  if (done) {
    m.waiting.erase(key);
    if (e.parity) m.last_wait[key] = completed - 1;
  } else {
    m.waiting[key] = here;
    if (e.parity && completed >= named + 2) m.last_wait[key] = completed - 2;  // report once
    last_pending[static_cast<uint64_t>(e.cta) << 32 | e.warp] = {
        here, static_cast<uint64_t>(e.owner) << 32 | e.id, m.phase, e.pending, m.expected, e.tx};
  }
}

void SyncMonitor::Impl::on_mbarrier(const SyncEvent& e) {
  const uint64_t mkey = static_cast<uint64_t>(e.owner) << 32 | e.id;
  const uint32_t lane = first_lane(e.mask);
  const Op here = op(e, lane);
  auto in_use = [&](const Mbarrier& m) {
    return m.pending != m.expected || m.tx != 0 || !m.waiting.empty();
  };
  auto state = [&](const Mbarrier& m) {
    return std::to_string(m.expected - m.pending) + " of " + std::to_string(m.expected) +
           " arrivals" + (m.tx > 0 ? ", " + std::to_string(m.tx) + " tx bytes missing" : "") +
           (m.waiting.empty() ? ""
                              : ", " + std::to_string(m.waiting.size()) + " thread(s) waiting");
  };
  if (e.kind == SyncKind::MbarrierUninitialized) {
    Raw r;
    r.kind = "uninitialized_mbarrier";
    r.object = "mbarrier";
    r.id = e.id;
    r.site = here;
    r.message = "an mbarrier operation on shared offset " + hex(e.id) +
                " found no initialized mbarrier there (never initialized, or invalidated)";
    r.fix =
        "initialize the mbarrier (mbarrier.init) and make the init visible "
        "(fence.mbarrier_init / __syncthreads()) before any thread arrives or waits on it, "
        "and do not use it after mbarrier.inval";
    report(std::move(r));
    return;
  }
  if (e.kind == SyncKind::MbarrierInit || e.kind == SyncKind::MbarrierInval) {
    auto it = mbarriers.find(mkey);
    bool init = e.kind == SyncKind::MbarrierInit;
    if (it != mbarriers.end() && in_use(it->second)) {
      Raw r;
      r.kind = init ? "init_in_use" : "inval_in_use";
      r.object = "mbarrier";
      r.id = e.id;
      r.site = here;
      r.earlier =
          !it->second.waiting.empty() ? it->second.waiting.begin()->second : it->second.last_arrive;
      r.message = std::string(init ? "mbarrier.init" : "mbarrier.inval") +
                  " on the mbarrier at shared offset " + hex(e.id) + " while its phase " +
                  std::to_string(it->second.phase) + " is in progress (" + state(it->second) + ")";
      r.fix =
          "re-initialize or invalidate an mbarrier only when no thread uses it: after a "
          "barrier (__syncthreads()) that follows the last wait on its final phase";
      report(std::move(r));
    }
    if (init) {
      Mbarrier m;
      m.expected = m.pending = e.count;
      m.init = here;
      mbarriers[mkey] = std::move(m);
    } else if (it != mbarriers.end()) {
      mbarriers.erase(it);
    }
    return;
  }
  auto it = mbarriers.find(mkey);
  if (it == mbarriers.end()) return;  // initialized before the observer (cannot happen)
  Mbarrier& m = it->second;
  switch (e.kind) {
    case SyncKind::MbarrierArrive: {
      if (e.tx_bytes != 0) {
        m.tx += e.tx_bytes;
        m.last_expect = here;
      }
      const uint64_t instruction =
          static_cast<uint64_t>(e.cta) << 40 | static_cast<uint64_t>(e.warp) << 32 | e.pc;
      if (instruction == m.instruction && lane > m.instruction_lane) {
        m.instruction_arrivals += e.count;
      } else {
        m.instruction_arrivals = e.count;
      }
      m.instruction = instruction;
      m.instruction_lane = lane;
      // One instruction's lanes arriving more often than a phase expects complete several
      // phases at once: the count given to mbarrier.init is per phase, not per thread.
      const bool too_many_lanes =
          m.expected != 0 && m.instruction_arrivals > m.expected &&
          m.instruction_arrivals - e.count <= m.expected;  // once per instruction
      if (too_many_lanes || e.count > m.pending || (e.count != 0 && m.pending == 0)) {
        Raw r;
        r.kind = "over_arrival";
        r.object = "mbarrier";
        r.id = e.id;
        r.site = here;
        r.earlier = m.init;
        r.message = std::to_string(e.count) + " arrival(s) on the mbarrier at shared offset " +
                    hex(e.id) + " in phase " + std::to_string(m.phase) + ", which missed only " +
                    std::to_string(m.pending) + " of the " + std::to_string(m.expected) +
                    " arrivals mbarrier.init expects per phase";
        r.fix =
            "make the arrivals per phase match the count given to mbarrier.init: one "
            "arrival per expected thread (or elect one thread per warp and init with the "
            "number of warps)";
        report(std::move(r));
      }
      if (e.drop && m.expected > 0) --m.expected;
      m.pending = e.count >= m.pending ? 0 : m.pending - e.count;
      m.last_arrive = here;
      break;
    }
    case SyncKind::MbarrierExpectTx:
      m.tx += e.count;
      m.last_expect = here;
      break;
    case SyncKind::MbarrierCompleteTx:
      m.tx -= e.count;  // a TMA copy's bytes too (the event carries them)
      break;
    case SyncKind::MbarrierWait:
    case SyncKind::MbarrierWaitPending:
      on_wait(e, m, lane, e.kind == SyncKind::MbarrierWait);
      return;
    default:
      return;
  }
  if (e.phase > m.phase) {  // this operation completed the phase
    if (m.tx < 0) {
      Raw r;
      r.kind = "tx_overflow";
      r.object = "mbarrier";
      r.id = e.id;
      r.site = here;
      r.earlier = m.last_expect;
      r.message = std::to_string(-m.tx) +
                  " transaction byte(s) more than expect_tx announced "
                  "arrived in phase " +
                  std::to_string(m.phase) +
                  " of the mbarrier at shared "
                  "offset " +
                  hex(e.id) + " (tx-count underflow); the extra bytes belong to no phase";
      r.fix =
          "make expect_tx (arrive.expect_tx) announce exactly the bytes the phase's copies "
          "deliver (the whole box of a tensor copy, out-of-bounds fill included)";
      report(std::move(r));
    }
    for (uint32_t p = m.phase; p < e.phase; ++p) m.completed_by[p % 4] = here;
    m.phase = e.phase;
    m.pending = m.expected;
    m.tx = 0;
  }
}

void SyncMonitor::Impl::left(const SyncEvent& e) {
  const uint64_t mkey = static_cast<uint64_t>(e.owner) << 32 | e.id;
  auto it = mbarriers.find(mkey);
  Op init, expect;
  if (it != mbarriers.end()) {
    init = it->second.init;
    expect = it->second.last_expect;
  }
  if (e.tx > 0) {
    Raw r;
    r.kind = "tx_never_arrived";
    r.object = "mbarrier";
    r.id = e.id;
    r.site = expect.valid ? expect : init;
    r.earlier = init;
    r.message = std::to_string(e.tx) + " transaction byte(s) expected in phase " +
                std::to_string(e.phase) + " of the mbarrier at shared offset " + hex(e.id) +
                " never arrived by kernel exit";
    r.fix =
        "issue the copies whose bytes expect_tx announced (every TMA copy names this "
        "mbarrier), or announce only the bytes actually copied";
    report(std::move(r));
  }
  if (e.pending != e.expected && e.expected != 0) {
    Raw r;
    r.kind = "mid_phase_at_exit";
    r.object = "mbarrier";
    r.id = e.id;
    r.site = it != mbarriers.end() && it->second.last_arrive.valid ? it->second.last_arrive : init;
    r.earlier = init;
    r.message = "the kernel exited with phase " + std::to_string(e.phase) +
                " of the mbarrier at shared offset " + hex(e.id) + " half done (" +
                std::to_string(e.expected - e.pending) + " of " + std::to_string(e.expected) +
                " arrivals)";
    r.fix =
        "make every expected thread arrive in each phase that is started, or wait for the "
        "phase before exiting; arrivals for a phase nobody completes hint at a wrong count";
    report(std::move(r));
  }
}

void SyncMonitor::Impl::on_barrier(const SyncEvent& e) {
  if (e.id >= 16) return;  // barrier.cluster: the simulator's deadlock covers it
  const uint64_t key = static_cast<uint64_t>(e.cta) * 17 + e.id;
  std::vector<syncmon::Arrival>& arrivals = barriers[key];
  if (e.kind == SyncKind::BarrierArrive) {
    const syncmon::Arrival arrival{op(e, first_lane(e.mask)), e.waits, e.expected};
    // Each arrival's count is checked as it arrives: one use of a named barrier whose
    // arrivals give different thread counts completes at whichever count arrived last, so
    // the check at completion misses the orders where the last count is the one that fits.
    if (arrival.count != 0 && !count_mismatched.count(key)) {
      for (const syncmon::Arrival& a : arrivals) {
        if (a.count == 0 || a.count == arrival.count) continue;
        count_mismatched.insert(key);
        Raw r;
        r.kind = "barrier_count_mismatch";
        r.object = "barrier";
        r.id = e.id;
        r.site = arrival.op;
        r.earlier = a.op;
        r.message = "a warp arrived at named barrier " + std::to_string(e.id) +
                    " with a thread count of " + std::to_string(arrival.count) + " after " +
                    std::to_string(e.count) + " thread(s) had arrived at it with a count of " +
                    std::to_string(a.count) +
                    ": the bar.sync/bar.arrive instructions of one use give different thread "
                    "counts, so it completes at whichever count arrives last";
        r.fix =
            "give every bar.sync/bar.arrive on one named barrier the same thread count, equal "
            "to the number of threads (a multiple of 32) that arrive per use";
        report(std::move(r));
        break;
      }
    }
    arrivals.push_back(arrival);
    return;
  }
  // BarrierRelease
  const std::string name = "barrier " + std::to_string(e.id);
  bool same = true;  // one instruction, nobody exited
  if (e.expected == 0) {
    for (const syncmon::Arrival& a : arrivals) {
      if (a.op.pc == arrivals.front().op.pc) continue;
      same = false;
      Raw r;
      r.kind = "barrier_divergence";
      r.object = "barrier";
      r.id = e.id;
      r.site = a.op;
      r.earlier = arrivals.front().op;
      r.message = "threads of one CTA completed " + name +
                  " at different bar.sync/__syncthreads() instructions: they took different "
                  "paths to it";
      r.fix =
          "call __syncthreads() where every thread of the block reaches the same call: move "
          "it out of the branch (or make the branch condition uniform across the block)";
      report(std::move(r));
      break;
    }
    if (e.cta < exited.size() && exited[e.cta] != 0 && !arrivals.empty()) {
      same = false;
      Raw r;
      r.kind = "exit_at_barrier";
      r.object = "barrier";
      r.id = e.id;
      r.site = arrivals.front().op;
      r.earlier = last_exit[e.cta];
      r.message = std::to_string(exited[e.cta]) + " thread(s) of the CTA had exited when " + name +
                  " completed with the other " + std::to_string(e.count) +
                  ": the barrier did not synchronize the whole block";
      r.fix =
          "do not return before a __syncthreads() that other threads still reach: guard the "
          "work (if (i < n) {...}) instead of returning early, and keep the barrier outside "
          "the guard";
      report(std::move(r));
    }
    if (same) ++uniform;
  } else if (e.count > e.expected && !count_mismatched.count(key)) {
    Raw r;
    r.kind = "barrier_count_mismatch";
    r.object = "barrier";
    r.id = e.id;
    r.site = arrivals.empty() ? Op{} : arrivals.back().op;
    r.earlier = arrivals.empty() ? Op{} : arrivals.front().op;
    r.message = "named " + name + " completed with " + std::to_string(e.count) +
                " threads arrived although its count is " + std::to_string(e.expected) +
                ": the bar.sync/bar.arrive instructions using it give different thread counts";
    r.fix =
        "give every bar.sync/bar.arrive on one named barrier the same thread count, equal "
        "to the number of threads (a multiple of 32) that arrive per use";
    report(std::move(r));
  }
  arrivals.clear();
  count_mismatched.erase(key);
}

void SyncMonitor::Impl::on_stuck(const SyncEvent& e) {
  if (deadlock < 0) {
    Raw r;
    r.kind = "deadlock";
    r.object = "barrier";
    r.message = "every live warp waits and none can proceed";
    r.fix =
        "make every thread reach each barrier it is counted for, keep named-barrier counts "
        "equal to the threads that arrive, and make sure every mbarrier phase waited on "
        "gets all its arrivals and transaction bytes";
    deadlock = static_cast<int>(raw.size());
    raw.push_back(std::move(r));
  }
  Raw& r = raw[static_cast<size_t>(deadlock)];
  std::optional<Raw> tx_missing;  // reported after r is done with (report() may move raw)
  Op here = op(e, first_lane(e.mask));
  std::string what;
  if (e.on_mbarrier) {
    auto it = last_pending.find(static_cast<uint64_t>(e.cta) << 32 | e.warp);
    if (it != last_pending.end()) {
      const Impl::PendingWait& w = it->second;
      here = w.op;
      uint64_t mkey = w.mbarrier;
      auto m = mbarriers.find(mkey);
      what = "mbarrier at shared offset " + hex(mkey & 0xffffffffu);
      if (m != mbarriers.end()) {
        r.object = "mbarrier";
        r.id = static_cast<uint32_t>(mkey);
        what += ", phase " + std::to_string(w.phase) + " (" +
                std::to_string(w.expected - w.pending) + " of " + std::to_string(w.expected) +
                " arrivals" +
                (w.tx > 0 ? ", " + std::to_string(w.tx) + " transaction bytes missing" : "") + ")";
        if (w.tx > 0 && w.pending == 0) {
          Raw t;
          t.kind = "tx_never_arrived";
          t.object = "mbarrier";
          t.id = static_cast<uint32_t>(mkey);
          t.site = m->second.last_expect;
          t.earlier = here;
          t.message = std::to_string(w.tx) +
                      " transaction byte(s) announced with expect_tx on "
                      "the mbarrier at shared offset " +
                      hex(mkey & 0xffffffffu) +
                      " never arrived, and a thread waits for them forever";
          t.fix =
              "issue the copies whose bytes expect_tx announced (every TMA copy names this "
              "mbarrier), or announce only the bytes actually copied";
          tx_missing = std::move(t);
        }
      }
    } else {
      what = "an mbarrier wait";
    }
  } else if (e.id == 16) {
    r.object = "barrier.cluster";
    what = "barrier.cluster (" + std::to_string(e.count) + " threads of the cluster arrived)";
  } else {
    r.id = e.id;
    what = "barrier " + std::to_string(e.id) + " (" + std::to_string(e.count) + " of " +
           std::to_string(e.expected) + " threads arrived)";
  }
  if (!r.site.valid) r.site = here;
  r.stuck.emplace_back(here, "warp " + std::to_string(e.warp) + " waits at " + what);
  if (tx_missing) report(std::move(*tx_missing));
}

void SyncMonitor::Impl::report(Raw r) {
  if (raw.size() >= 256) return;  // one launch: enough to name every distinct site
  raw.push_back(std::move(r));
}

void SyncMonitor::sync(const SyncEvent& e) {
  Impl& d = *impl_;
  switch (e.kind) {
    case SyncKind::BarrierArrive:
    case SyncKind::BarrierRelease:
      d.on_barrier(e);
      break;
    case SyncKind::ThreadExit:
      if (e.cta < d.exited.size()) {
        d.exited[e.cta] += static_cast<uint32_t>(std::popcount(e.mask));
        d.last_exit[e.cta] = d.op(e, first_lane(e.mask));
      }
      break;
    case SyncKind::Stuck:
      d.on_stuck(e);
      break;
    case SyncKind::PartialWarp: {
      Raw r;
      r.kind = "barrier_divergence";
      r.object = "barrier";
      r.site = d.op(e, first_lane(e.mask));
      if (e.cta < d.last_exit.size()) r.earlier = d.last_exit[e.cta];
      char mask[16];
      std::snprintf(mask, sizeof mask, "0x%08x", e.mask);
      r.message = "only lanes " + std::string(mask) + " of warp " + std::to_string(e.warp) +
                  " reached this barrier (or warp-wide instruction); the other lanes of the warp "
                  "took another path (a branch or an early return) and wait elsewhere";
      r.fix =
          "call __syncthreads() where every thread of the block reaches the same call: move "
          "it out of the branch, or guard the work instead of returning early";
      d.report(std::move(r));
      break;
    }
    case SyncKind::MbarrierLeft:
      d.left(e);
      break;
    case SyncKind::MbarrierInit:
    case SyncKind::MbarrierArrive:
    case SyncKind::MbarrierCompleteTx:
    case SyncKind::MbarrierWait:
    case SyncKind::MbarrierExpectTx:
    case SyncKind::MbarrierInval:
    case SyncKind::MbarrierWaitPending:
    case SyncKind::MbarrierUninitialized:
      d.on_mbarrier(e);
      break;
    default:  // fences, warp syncs, cp.async groups: no protocol to check
      break;
  }
}

}  // namespace kiln::check
