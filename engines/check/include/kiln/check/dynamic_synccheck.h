// synccheck on the simulator: a run-time checker of the mbarrier protocol and of CTA barriers
// that watches a launch through the simulator's MemoryObserver (kiln/sim/memory_observer.h).
// It keeps its own model of every mbarrier (expected arrivals, pending arrivals, transaction
// bytes, completed phases, and per thread the phase it last waited for) and of the arrivals at
// each bar/barrier, and reports protocol errors the static engine cannot see: a wait whose
// phase the barrier already left behind (phase overrun, the reused-mbarrier bug), arrivals
// beyond the expected count, transaction bytes that never arrive or overflow, init/inval while
// the barrier is in use, a phase left half done at exit, waits on uninitialized barriers,
// threads of a CTA at different bar.sync instructions or exited while others wait, named
// barriers completed by more threads than their count, and deadlocks with where each warp
// waits. It runs over the schedules racecheck explores (check::race_schedules).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "kiln/check/schedules.h"
#include "kiln/sim/memory_observer.h"

namespace kiln::check {

// Where a synchronization operation ran.
struct SyncSite {
  sim::Dim3 block, thread;
  uint32_t ptx_line = 0;
  std::string instruction;
  std::string source;  // "kernel.cu:42:7" with -lineinfo, else ""
};

// One warp of a deadlock: where it waits and on what.
struct StuckWarp {
  SyncSite site;  // the warp's first live thread
  uint32_t warp = 0;
  std::string waits_on;  // "bar.sync 1: 64 of 128 threads arrived", "mbarrier 0x10 phase 3: ..."
};

struct SyncFinding {
  // "phase_overrun", "over_arrival", "tx_never_arrived", "tx_overflow", "init_in_use",
  // "inval_in_use", "mid_phase_at_exit", "uninitialized_mbarrier", "barrier_divergence",
  // "exit_at_barrier", "barrier_count_mismatch", "deadlock"
  std::string kind;
  std::string object;  // "mbarrier", "barrier", "barrier.cluster"
  std::string kernel;
  uint32_t id = 0;  // barrier id, or the mbarrier's shared offset
  SyncSite site;    // the offending operation
  bool has_earlier = false;
  SyncSite earlier;              // the earlier operation it conflicts with
  std::vector<StuckWarp> stuck;  // deadlock
  std::string schedule;          // the first schedule that exposed it
  uint64_t seed = 0;             // random, pct, exhaustive: replays it
  std::vector<std::string> schedules;
  uint64_t occurrences = 0;
  std::string message, fix;
};

class SyncMonitor final : public sim::MemoryObserver {
 public:
  explicit SyncMonitor(uint32_t max_findings = 32);
  ~SyncMonitor() override;
  SyncMonitor(const SyncMonitor&) = delete;
  SyncMonitor& operator=(const SyncMonitor&) = delete;

  void set_schedule(const sim::WarpSchedule& schedule);
  // Distinct findings (by kernel, kind and the PTX lines of both sites) over every launch and
  // schedule; one seen again counts as an occurrence.
  const std::vector<SyncFinding>& findings() const;
  uint64_t dropped_findings() const;
  uint64_t launches() const;
  // bar.sync (no count) releases where every arrival came from one instruction and no thread
  // had exited: barriers that ran without divergence.
  uint64_t uniform_barriers() const;

  sim::WarpSchedule schedule() const override;
  void launch_begin(const sim::LaunchInfo& info) override;
  void cluster_begin(const std::vector<sim::Dim3>& ctas) override;
  void access(const sim::AccessEvent& event) override;
  void sync(const sim::SyncEvent& event) override;
  void launch_end(const std::vector<std::string>& sources) override;
  void cluster_schedule(const sim::ClusterSchedule& cluster) override;
  // The priority schedules of the current schedule's launches (steps, interleavings).
  const ScheduleLog& schedule_log() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Runs several observers on one launch (racecheck and synccheck in one pass); the schedule is
// the first one's.
class FanOutObserver final : public sim::MemoryObserver {
 public:
  explicit FanOutObserver(std::vector<sim::MemoryObserver*> observers);
  sim::WarpSchedule schedule() const override;
  void launch_begin(const sim::LaunchInfo& info) override;
  void cluster_begin(const std::vector<sim::Dim3>& ctas) override;
  void access(const sim::AccessEvent& event) override;
  void sync(const sim::SyncEvent& event) override;
  void launch_end(const std::vector<std::string>& sources) override;
  void cluster_schedule(const sim::ClusterSchedule& cluster) override;

 private:
  std::vector<sim::MemoryObserver*> observers_;
};

nlohmann::json to_json(const SyncFinding& finding);

}  // namespace kiln::check
