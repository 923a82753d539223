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
#include "kiln/sim/memory_observer.h"
#include "kiln/tasks/task.h"
#include "workload_run.h"

namespace kiln::sim::run {

struct SweepChecker {
  std::string mode;  // "racecheck" or "synccheck": messages and the progress event's name
  MemoryObserver* observer = nullptr;
  std::function<void(const WarpSchedule&)> set_schedule;
  std::function<size_t()> finding_count;
  // True when a workload that stopped with `message` stopped on a fault the checker reported
  // as a finding during it (so nothing is left unchecked); empty: never.
  std::function<bool(const std::string& message)> stop_is_a_finding;
};

struct Sweep {
  nlohmann::json schedules = nlohmann::json::array();  // per schedule: workloads, new_findings
  nlohmann::json notes = nlohmann::json::array();
};

// An error when the runtime has no observer hook.
Result<Sweep> sweep_schedules(const WorkloadRunner& runner,
                              const std::vector<tasks::Workload>& workloads, uint32_t schedules,
                              uint64_t seed, const SweepChecker& checker,
                              const std::function<void(const nlohmann::json&)>& progress);

}  // namespace kiln::sim::run
