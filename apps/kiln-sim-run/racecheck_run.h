// kiln-sim-run --racecheck: the task's sim workloads run through the candidate under the
// simulator's race detector (kiln/check/dynamic_racecheck.h), once per warp schedule. The
// detector reaches the Device inside libkiln_cudart_sim.so through kiln_sim_set_observer.
// The JSON it returns is documented in engines/check/README.md ("racecheck on the simulator").
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

using RacecheckOptions = SweepPlan;

// {"verdict", "findings", "schedules", "notes", "coverage", "seconds"}; `progress` receives
// one line per finished (schedule, workload). An error when the runtime has no observer hook.
Result<nlohmann::json> run_racecheck(const WorkloadRunner& runner,
                                     const std::vector<tasks::Workload>& workloads,
                                     const RacecheckOptions& options,
                                     const std::function<void(const nlohmann::json&)>& progress);

}  // namespace kiln::sim::run
