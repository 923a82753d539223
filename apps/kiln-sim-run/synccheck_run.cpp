#include "synccheck_run.h"

#include <dlfcn.h>

#include <chrono>
#include <string>

#include "candidate_build.h"
#include "kiln/check/dynamic_racecheck.h"
#include "kiln/check/dynamic_synccheck.h"

namespace kiln::sim::run {
namespace {

using SetObserver = void (*)(MemoryObserver*);

// kiln_sim_set_observer of the runtime this process loaded (not a copy linked elsewhere).
Status observer_hook(SetObserver& out) {
  const std::string library = loaded_runtime_library().string();
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) {
    return make_error("the simulated runtime (" + library +
                      ") is not loaded; synccheck needs kiln-sim-run built with it");
  }
  auto hook = reinterpret_cast<SetObserver>(dlsym(handle, "kiln_sim_set_observer"));
  dlclose(handle);  // RTLD_NOLOAD took one more reference; the library stays loaded
  if (hook == nullptr) {
    return make_error(library + " exports no kiln_sim_set_observer; rebuild the runtime");
  }
  out = hook;
  return Ok{};
}

struct ObserverScope {
  SetObserver set;
  ObserverScope(SetObserver s, MemoryObserver* observer) : set(s) { set(observer); }
  ~ObserverScope() { set(nullptr); }
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

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
  SetObserver hook = nullptr;
  if (Status found = observer_hook(hook); !found) return make_error(found.error().message);
  const auto start = std::chrono::steady_clock::now();
  check::SyncMonitor monitor;
  ObserverScope scope(hook, &monitor);
  nlohmann::json schedules = nlohmann::json::array(), notes = nlohmann::json::array();
  const std::vector<WarpSchedule> plan = check::race_schedules(options.schedules, options.seed);
  for (size_t i = 0; i < plan.size(); ++i) {
    monitor.set_schedule(plan[i]);
    const size_t before = monitor.findings().size();
    const auto schedule_start = std::chrono::steady_clock::now();
    nlohmann::json ran = nlohmann::json::array();
    for (const tasks::Workload& workload : workloads) {
      const auto workload_start = std::chrono::steady_clock::now();
      const size_t found_before = monitor.findings().size();
      nlohmann::json result = runner.run(workload);
      const std::string status = result.value("status", "");
      const std::string message = result.value("message", "");
      const nlohmann::json launches = result.value("launches", nlohmann::json::array());
      double simulated = 0;
      for (const nlohmann::json& launch : launches) {
        simulated +=
            launch.value("stats", nlohmann::json::object()).value("simulation_seconds", 0.0);
      }
      ran.push_back({{"workload", workload.name},
                     {"status", status},
                     {"launches", launches.size()},
                     {"launch_seconds", simulated},
                     {"seconds", seconds_since(workload_start)}});
      const bool explained =
          monitor.findings().size() > found_before && explained_by_findings(message);
      if (status != "pass" && status != "wrong_answer" && !explained) {
        notes.push_back("workload " + workload.name + " under the " +
                        check::schedule_name(plan[i]) + " schedule stopped early (" + status +
                        ": " + message + "); the launches after the stop were not checked");
      }
      if (progress) {
        progress({{"event", "synccheck_workload"},
                  {"schedule", i},
                  {"workload", workload.name},
                  {"status", status},
                  {"findings", monitor.findings().size()}});
      }
    }
    nlohmann::json found = nlohmann::json::array();
    for (size_t f = before; f < monitor.findings().size(); ++f) found.push_back(f);
    schedules.push_back({{"index", i},
                         {"schedule", check::schedule_name(plan[i])},
                         {"seed", plan[i].order == WarpOrder::Random ? plan[i].seed : 0},
                         {"workloads", ran},
                         {"new_findings", found},
                         {"seconds", seconds_since(schedule_start)}});
  }
  nlohmann::json findings = nlohmann::json::array();
  for (const check::SyncFinding& f : monitor.findings()) findings.push_back(check::to_json(f));
  if (monitor.dropped_findings() != 0) {
    notes.push_back(std::to_string(monitor.dropped_findings()) +
                    " further synchronization errors were not reported (the first are kept)");
  }
  const char* verdict = !findings.empty() ? "findings" : notes.empty() ? "clean" : "incomplete";
  return nlohmann::json{{"verdict", verdict},
                        {"findings", findings},
                        {"schedules", schedules},
                        {"notes", notes},
                        {"coverage",
                         {{"launches", monitor.launches()},
                          {"uniform_barriers", monitor.uniform_barriers()},
                          {"dropped_findings", monitor.dropped_findings()}}},
                        {"seconds", seconds_since(start)}};
}

}  // namespace kiln::sim::run
