#include "racecheck_run.h"

#include <chrono>
#include <string>

#include "kiln/check/dynamic_racecheck.h"
#include "schedule_sweep.h"

namespace kiln::sim::run {

Result<nlohmann::json> run_racecheck(const WorkloadRunner& runner,
                                     const std::vector<tasks::Workload>& workloads,
                                     const RacecheckOptions& options,
                                     const std::function<void(const nlohmann::json&)>& progress) {
  const auto start = std::chrono::steady_clock::now();
  check::RaceDetector detector;
  SweepChecker checker;
  checker.mode = "racecheck";
  checker.observer = &detector;
  checker.set_schedule = [&](const WarpSchedule& s) { detector.set_schedule(s); };
  checker.finding_count = [&] { return detector.findings().size(); };
  checker.log = [&]() -> const check::ScheduleLog& { return detector.schedule_log(); };
  auto sweep = sweep_schedules(runner, workloads, options, checker, progress);
  if (!sweep) return make_error(sweep.error().message);
  nlohmann::json findings = nlohmann::json::array();
  for (const check::RaceFinding& f : detector.findings()) findings.push_back(check::to_json(f));
  if (detector.dropped_findings() != 0) {
    sweep->notes.push_back(std::to_string(detector.dropped_findings()) +
                           " further races were not reported (the first findings are kept)");
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
                         {{"launches", detector.launches()},
                          {"evicted_reads", detector.evicted_reads()},
                          {"dropped_findings", detector.dropped_findings()}}},
                        {"seconds", seconds_since(start)}};
}

}  // namespace kiln::sim::run
