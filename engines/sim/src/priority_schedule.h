// The priority schedules of kiln/sim/memory_observer.h (WarpOrder::Pct, WarpOrder::Exhaustive):
// which warp of a cluster takes the next synchronization step. The CTA runner asks `pick` for
// the highest-priority warp among those that can run, reports each step, and gets what the
// cluster's schedule did (steps, a hash of the warp sequence) at its end.
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "kiln/sim/memory_observer.h"

namespace kiln::sim {

class PrioritySchedule {
 public:
  explicit PrioritySchedule(const WarpSchedule& schedule);

  // A new cluster of `warps` warps: fresh priorities and (Pct) change points.
  void begin_cluster(uint32_t warps);
  // The eligible warp (eligible[i] != 0) of the highest priority, or -1 when none is.
  int pick(const std::vector<char>& eligible) const;
  // Warp `warp` took a step: at a Pct change point it drops below every other warp.
  void stepped(uint32_t warp);
  ClusterSchedule cluster() const { return {step_, trace_, warps_}; }

  // The priority order Exhaustive schedule `index` gives `warps` warps: position 0 runs first.
  // Indices 0 .. warps!-1 name every permutation once (a mixed-radix number); larger ones wrap.
  static std::vector<uint32_t> permutation(uint64_t index, uint32_t warps);

 private:
  WarpSchedule schedule_;
  std::mt19937_64 random_;
  std::vector<int64_t> priority_;  // by warp; larger runs first
  // Pct: (step, priority): after that step (1-based) the running warp takes that priority.
  std::vector<std::pair<uint64_t, int64_t>> changes_;
  size_t next_change_ = 0;
  uint64_t step_ = 0, trace_ = 0, last_steps_ = 0;
  uint32_t warps_ = 0;
};

}  // namespace kiln::sim
