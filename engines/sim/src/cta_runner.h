// Runs the CTAs of a launch one cluster at a time (CTAs of different clusters are independent;
// without clusters a cluster is one CTA): sets up each CTA's warps, registers, shared and local
// memory, then schedules all warps of the cluster round-robin until all exit, a fault stops
// the launch, or every live warp waits forever (deadlock). Under a priority schedule (Pct,
// Exhaustive: memory_observer.h) the warps instead take one synchronization step at a time,
// the highest-priority warp that can run first.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "exec.h"
#include "kiln/sim/device.h"
#include "priority_schedule.h"

namespace kiln::sim {

struct RunLimits {
  uint64_t instruction_budget = 0;  // warp-instructions, 0: none
  double time_limit_seconds = 0;    // 0: none
  uint32_t multiprocessors = 132;
  bool independent_thread_scheduling = false;
  // The order warps take turns in (kiln/sim/memory_observer.h); in order unless an observer
  // asks for another, so the ordinary path is unchanged.
  WarpSchedule schedule;
};

class CtaRunner {
 public:
  CtaRunner(Exec& exec, const RunLimits& limits);

  // Runs the cluster whose first CTA is `first` (x.config.cluster CTAs) to completion; false
  // when a fault stopped it (see Exec::faults).
  bool run(Dim3 first);

 private:
  void set_up(Dim3 first);
  bool run_by_priority();
  // false: a fault or a limit stopped the launch (after a warp's turn).
  bool turn_ok(Warp& warp);
  void run_warp(Warp& warp);
  // spinning: the running warps spin on mbarrier waits nothing can complete.
  void report_deadlock(bool spinning = false);
  bool over_limits(Warp& warp);
  void rotate_siblings(Warp& warp);
  // The warps of the cluster in the order of the next round, and its slice length.
  void next_round();

  Exec& x_;
  RunLimits limits_;
  std::vector<std::unique_ptr<Cta>> ctas_;  // by rank in the cluster
  ClusterBarrier cluster_barrier_;
  std::vector<std::pair<Cta*, Warp*>> order_;
  uint64_t slice_ = 0;
  bool yielded_ = false;  // the last turn ended at a failed mbarrier wait
  std::mt19937_64 random_;
  std::unique_ptr<PrioritySchedule> priority_;  // Pct, Exhaustive
  std::chrono::steady_clock::time_point start_;
};

}  // namespace kiln::sim
