// kiln-sim-run --synccheck: the task's sim workloads run through the candidate under the
// simulator's synchronization checker (kiln/check/dynamic_synccheck.h), once per warp schedule.
// The checker reaches the Device inside libkiln_cudart_sim.so through kiln_sim_set_observer.
// The JSON it returns is documented in engines/check/README.md ("synccheck on the simulator").
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/tasks/task.h"
#include "schedule_sweep.h"
#include "workload_run.h"

namespace kiln::sim::run {

using SynccheckOptions = SweepPlan;

// {"verdict", "findings", "schedules", "notes", "coverage", "seconds"}; `progress` receives
// one line per finished (schedule, workload). An error when the runtime has no observer hook.
Result<nlohmann::json> run_synccheck(const WorkloadRunner& runner,
                                     const std::vector<tasks::Workload>& workloads,
                                     const SynccheckOptions& options,
                                     const std::function<void(const nlohmann::json&)>& progress);

}  // namespace kiln::sim::run
