// The warp schedules racecheck and synccheck run (kiln/sim/memory_observer.h): in order,
// reversed, then an exploration of one kind: seeded random rounds, PCT (random priorities with
// depth - 1 change points over the synchronization steps), or every priority order of the
// warps of a cluster (exhaustive, for small CTAs). And what the checkers remember of the
// priority schedules they ran: their steps, the interleavings seen (equal ones are duplicates)
// and the largest cluster ordered.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/sim/memory_observer.h"

namespace kiln::check {

inline constexpr uint32_t kDefaultPctDepth = 3;

// `count` schedules: in order, reversed, then count - 2 of `explore` (Random, Pct or
// Exhaustive): random and PCT ones seeded seed, seed + 1, ... (PCT at depths 1 .. depth in
// turn); exhaustive ones numbered 0, 1, ... (the permutations of the warps; a sweep stops when
// they are exhausted).
std::vector<sim::WarpSchedule> race_schedules(uint32_t count, uint64_t seed,
                                              sim::WarpOrder explore = sim::WarpOrder::Random,
                                              uint32_t depth = kDefaultPctDepth);
// "in_order", "reversed", "random", "pct", "exhaustive".
std::string schedule_name(const sim::WarpSchedule& schedule);
// The name with what replays it: "in_order", "random:7", "pct:7:d2" (seed 7, depth 2),
// "exhaustive:5" (the permutation's number).
std::string schedule_label(const sim::WarpSchedule& schedule);
// A label back into its schedule; false when it is not one.
bool parse_schedule_label(const std::string& label, sim::WarpSchedule* schedule);
// The seed (random, pct) or permutation number (exhaustive) that replays it; 0 otherwise.
uint64_t schedule_seed(const sim::WarpSchedule& schedule);
// "random", "pct" or "exhaustive" (the exploration kind) into *order; false for another word.
bool parse_exploration(const std::string& word, sim::WarpOrder* order);

class ScheduleLog {
 public:
  void set_schedule(const sim::WarpSchedule& schedule);
  void cluster_schedule(const sim::ClusterSchedule& cluster);

  const sim::WarpSchedule& schedule() const { return schedule_; }
  // The hash of the interleavings of the current schedule's clusters so far.
  uint64_t trace() const { return trace_; }
  // The most warps one cluster ordered under a priority schedule (exhaustive's n).
  uint32_t max_warps() const { return max_warps_; }
  // Steps taken under the current schedule.
  uint64_t steps() const { return steps_; }

 private:
  sim::WarpSchedule schedule_;
  uint64_t trace_ = 0, steps_ = 0;
  uint32_t max_warps_ = 0;
};

// How many priority orders `warps` warps have (warps!, saturated at UINT64_MAX).
uint64_t priority_orders(uint32_t warps);

}  // namespace kiln::check
