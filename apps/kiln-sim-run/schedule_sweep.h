// What --racecheck and --synccheck share: an observer installed in the simulated runtime this
// process loaded (kiln_sim_set_observer), and the task's sim workloads run once per warp
// schedule under it, with a line per (schedule, workload), progress, and a note for every
// workload that stopped early. The checkers differ only in their observer and their findings.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/base/elapsed.h"  // seconds_since, for the runs that use the sweep
#include "kiln/base/result.h"
#include "kiln/check/schedules.h"
#include "kiln/sim/memory_observer.h"
#include "kiln/tasks/task.h"
#include "workload_run.h"

namespace kiln::sim::run {

// The schedules to run (check::race_schedules): in order, reversed, then schedules - 2 of
// `explore`. An exhaustive sweep stops once it ran every priority order of the largest
// cluster's warps.
struct SweepPlan {
  uint32_t schedules = 3;
  uint64_t seed = 1;  // the first random or PCT schedule's seed (and the inputs' seed)
  WarpOrder explore = WarpOrder::Random;
  uint32_t depth = 3;  // PCT
  // Run only this schedule (a finding's label, check::parse_schedule_label), when set.
  bool replay = false;
  WarpSchedule replay_schedule;
};

struct SweepChecker {
  std::string mode;  // "racecheck" or "synccheck": messages and the progress event's name
  MemoryObserver* observer = nullptr;
  std::function<void(const WarpSchedule&)> set_schedule;
  std::function<size_t()> finding_count;
  // What the priority schedules of the current schedule did.
  std::function<const check::ScheduleLog&()> log;
  // True when a workload that stopped with `message` stopped on a fault the checker reported
  // as a finding during it (so nothing is left unchecked); empty: never.
  std::function<bool(const std::string& message)> stop_is_a_finding;
};

struct Sweep {
  nlohmann::json schedules = nlohmann::json::array();  // per schedule: workloads, new_findings
  nlohmann::json notes = nlohmann::json::array();
  // {"kind", "ran", "distinct", "exhausted", "depth"}: the schedules of the exploration kind.
  nlohmann::json exploration = nlohmann::json::object();
};

// An error when the runtime has no observer hook.
Result<Sweep> sweep_schedules(const WorkloadRunner& runner,
                              const std::vector<tasks::Workload>& workloads, const SweepPlan& plan,
                              const SweepChecker& checker,
                              const std::function<void(const nlohmann::json&)>& progress);

}  // namespace kiln::sim::run
