// SyncMonitor's state: its model of each mbarrier and CTA barrier of the running cluster, and
// the findings of the launch before their .cu lines are known.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kiln/check/dynamic_synccheck.h"

namespace kiln::check::syncmon {

// One thread's operation: who and which instruction.
struct Op {
  bool valid = false;
  sim::Dim3 block;
  uint32_t linear = 0;  // thread index in the CTA
  uint32_t pc = 0;
};

struct Mbarrier {
  uint32_t expected = 0;  // arrivals per phase
  uint32_t pending = 0;   // arrivals the phase still misses
  int64_t tx = 0;         // transaction bytes the phase still misses
  uint32_t phase = 0;     // completed phases
  Op init, last_arrive, last_expect;
  // The arrive instruction of the latest arrivals (cta << 40 | warp << 32 | pc), its last lane
  // and how many arrivals its lanes made so far: lanes of one instruction come in lane order.
  uint64_t instruction = UINT64_MAX;
  uint32_t instruction_lane = 0, instruction_arrivals = 0;
  std::array<Op, 4> completed_by;  // the operation that completed phase p, at p % 4
  // Per thread (cta << 10 | linear): the phase it last waited for (absent: none yet).
  std::unordered_map<uint32_t, int64_t> last_wait;
  std::unordered_map<uint32_t, Op> waiting;  // threads whose last wait did not succeed
};

struct Arrival {
  Op op;
  bool waits = false;
  uint32_t count = 0;  // the instruction's thread count; 0: every thread of the CTA
};

// A finding of this launch, sources still to fill.
struct Raw {
  std::string kind, object;
  uint32_t id = 0;
  Op site, earlier;
  std::vector<std::pair<Op, std::string>> stuck;  // deadlock: each warp, what it waits on
  std::string message, fix;
};

}  // namespace kiln::check::syncmon

namespace kiln::check {

struct SyncMonitor::Impl {
  uint32_t max_findings = 32;
  sim::WarpSchedule schedule;
  ScheduleLog log;
  sim::LaunchInfo info;
  std::vector<sim::Dim3> ctas;                                // of the running cluster, by rank
  std::unordered_map<uint64_t, syncmon::Mbarrier> mbarriers;  // owner << 32 | offset
  std::unordered_map<uint64_t, std::vector<syncmon::Arrival>> barriers;  // cta * 17 + id
  // Barriers (cta * 17 + id) whose arrivals since the last release gave different thread
  // counts, already reported at the arrival: not reported again when they complete.
  std::unordered_set<uint64_t> count_mismatched;
  std::vector<syncmon::Op> last_exit;  // per CTA rank
  std::vector<uint32_t> exited;        // threads, per CTA
  // Per warp (cta << 32 | warp): its last wait that did not succeed, and on which mbarrier.
  struct PendingWait {
    syncmon::Op op;
    uint64_t mbarrier = 0;  // owner << 32 | offset
    uint32_t phase = 0, pending = 0, expected = 0;
    int64_t tx = 0;  // the simulator's state at the wait
  };
  std::unordered_map<uint64_t, PendingWait> last_pending;
  std::vector<syncmon::Raw> raw;
  int deadlock = -1;  // index in raw of this launch's deadlock
  std::vector<SyncFinding> findings;
  uint64_t dropped = 0, launches = 0, uniform = 0;

  syncmon::Op op(const sim::SyncEvent& e, uint32_t lane) const;
  std::string hex(uint64_t v) const;
  void on_mbarrier(const sim::SyncEvent& e);
  void on_wait(const sim::SyncEvent& e, syncmon::Mbarrier& m, uint32_t lane, bool done);
  void on_barrier(const sim::SyncEvent& e);
  void on_stuck(const sim::SyncEvent& e);
  void left(const sim::SyncEvent& e);
  void report(syncmon::Raw r);
  SyncSite describe(const syncmon::Op& op, const std::vector<std::string>& sources) const;
  void publish(const std::vector<std::string>& sources);
};

}  // namespace kiln::check
