#include "schedule_sweep.h"

#include <dlfcn.h>

#include <chrono>

#include "candidate_build.h"
#include "kiln/check/dynamic_racecheck.h"

namespace kiln::sim::run {
namespace {

using SetObserver = void (*)(MemoryObserver*);

// kiln_sim_set_observer of the runtime this process loaded (not a copy linked elsewhere).
Status observer_hook(const std::string& mode, SetObserver& out) {
  const std::string library = loaded_runtime_library().string();
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) {
    return make_error("the simulated runtime (" + library + ") is not loaded; " + mode +
                      " needs kiln-sim-run built with it");
  }
  auto hook = reinterpret_cast<SetObserver>(dlsym(handle, "kiln_sim_set_observer"));
  dlclose(handle);  // RTLD_NOLOAD took one more reference; the library stays loaded
  if (hook == nullptr) {
    return make_error(library + " exports no kiln_sim_set_observer; rebuild the runtime");
  }
  out = hook;
  return Ok{};
}

// Installs the observer for the lifetime of this object, on every path out.
struct ObserverScope {
  SetObserver set;
  ObserverScope(SetObserver s, MemoryObserver* observer) : set(s) { set(observer); }
  ~ObserverScope() { set(nullptr); }
};

}  // namespace

Result<Sweep> sweep_schedules(const WorkloadRunner& runner,
                              const std::vector<tasks::Workload>& workloads, uint32_t schedules,
                              uint64_t seed, const SweepChecker& checker,
                              const std::function<void(const nlohmann::json&)>& progress) {
  SetObserver hook = nullptr;
  if (Status found = observer_hook(checker.mode, hook); !found)
    return make_error(found.error().message);
  ObserverScope scope(hook, checker.observer);
  Sweep sweep;
  const std::vector<WarpSchedule> plan = check::race_schedules(schedules, seed);
  for (size_t i = 0; i < plan.size(); ++i) {
    checker.set_schedule(plan[i]);
    const size_t before = checker.finding_count();
    const auto schedule_start = std::chrono::steady_clock::now();
    nlohmann::json ran = nlohmann::json::array();
    for (const tasks::Workload& workload : workloads) {
      const auto workload_start = std::chrono::steady_clock::now();
      const size_t found_before = checker.finding_count();
      nlohmann::json result = runner.run(workload);
      const std::string status = result.value("status", "");
      const std::string message = result.value("message", "");
      const nlohmann::json launches = result.value("launches", nlohmann::json::array());
      double simulated = 0;  // the launches themselves, under the observer
      for (const nlohmann::json& launch : launches) {
        simulated +=
            launch.value("stats", nlohmann::json::object()).value("simulation_seconds", 0.0);
      }
      ran.push_back({{"workload", workload.name},
                     {"status", status},
                     {"launches", launches.size()},
                     {"launch_seconds", simulated},
                     {"seconds", seconds_since(workload_start)}});
      // A fault or a failed CUDA call stops the workload early: what would have run after it
      // was not checked, unless the stop is itself a finding. A wrong answer was checked whole.
      const bool stop_found = checker.stop_is_a_finding && checker.finding_count() > found_before &&
                              checker.stop_is_a_finding(message);
      if (status != "pass" && status != "wrong_answer" && !stop_found) {
        sweep.notes.push_back("workload " + workload.name + " under the " +
                              check::schedule_name(plan[i]) + " schedule stopped early (" + status +
                              ": " + message + "); the launches after the stop were not checked");
      }
      if (progress) {
        progress({{"event", checker.mode + "_workload"},
                  {"schedule", i},
                  {"workload", workload.name},
                  {"status", status},
                  {"findings", checker.finding_count()}});
      }
    }
    nlohmann::json found = nlohmann::json::array();
    for (size_t f = before; f < checker.finding_count(); ++f) found.push_back(f);
    sweep.schedules.push_back({{"index", i},
                               {"schedule", check::schedule_name(plan[i])},
                               {"seed", plan[i].order == WarpOrder::Random ? plan[i].seed : 0},
                               {"workloads", ran},
                               {"new_findings", found},
                               {"seconds", seconds_since(schedule_start)}});
  }
  return sweep;
}

}  // namespace kiln::sim::run
