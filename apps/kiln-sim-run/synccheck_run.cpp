#include "synccheck_run.h"

#include <chrono>
#include <string>

#include "kiln/check/dynamic_synccheck.h"
#include "schedule_sweep.h"

namespace kiln::sim::run {
namespace {

// A deadlock or an uninitialized mbarrier stops the workload with a fault the checker already
// reported as a finding; any other stop leaves the rest of the workload unchecked.
bool explained_by_findings(const std::string& message) {
  return message.find("deadlock") != std::string::npos ||
         message.find("before mbarrier.init") != std::string::npos;
}

}  // namespace

Result<nlohmann::json> run_synccheck(const WorkloadRunner& runner,
                                     const std::vector<tasks::Workload>& workloads,
                                     const SynccheckOptions& options,
                                     const std::function<void(const nlohmann::json&)>& progress) {
  const auto start = std::chrono::steady_clock::now();
  check::SyncMonitor monitor;
  SweepChecker checker;
  checker.mode = "synccheck";
  checker.observer = &monitor;
  checker.set_schedule = [&](const WarpSchedule& s) { monitor.set_schedule(s); };
  checker.finding_count = [&] { return monitor.findings().size(); };
  checker.log = [&]() -> const check::ScheduleLog& { return monitor.schedule_log(); };
  checker.stop_is_a_finding = explained_by_findings;
  auto sweep = sweep_schedules(runner, workloads, options, checker, progress);
  if (!sweep) return make_error(sweep.error().message);
  nlohmann::json findings = nlohmann::json::array();
  for (const check::SyncFinding& f : monitor.findings()) findings.push_back(check::to_json(f));
  if (monitor.dropped_findings() != 0) {
    sweep->notes.push_back(
        std::to_string(monitor.dropped_findings()) +
        " further synchronization errors were not reported (the first are kept)");
  }
  const char* verdict = !findings.empty()      ? "findings"
                        : sweep->notes.empty() ? "clean"
                                               : "incomplete";
  return nlohmann::json{{"verdict", verdict},
                        {"findings", findings},
                        {"schedules", sweep->schedules},
                        {"exploration", sweep->exploration},
                        {"notes", sweep->notes},
                        {"coverage",
                         {{"launches", monitor.launches()},
                          {"uniform_barriers", monitor.uniform_barriers()},
                          {"dropped_findings", monitor.dropped_findings()}}},
                        {"seconds", seconds_since(start)}};
}

}  // namespace kiln::sim::run
