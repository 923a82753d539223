#include "schedule_sweep.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <unordered_map>

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

// The exploration's bookkeeping: which priority schedules repeated an interleaving already seen
// (the same warp took every synchronization step), and when an exhaustive one ran out of orders.
class Exploration {
 public:
  explicit Exploration(const SweepPlan& plan) : plan_(plan) {}

  bool exhausted(const WarpSchedule& s) const {
    return s.order == WarpOrder::Exhaustive && warps_ != 0 &&
           s.seed >= check::priority_orders(warps_);
  }

  void add(const WarpSchedule& s, const check::ScheduleLog& log, size_t index,
           nlohmann::json& entry) {
    if (s.order != WarpOrder::Pct && s.order != WarpOrder::Exhaustive) {
      if (s.order == plan_.explore) ++ran_;
      return;
    }
    ++ran_;
    warps_ = std::max(warps_, log.max_warps());
    if (s.order == WarpOrder::Pct) entry["depth"] = s.depth;
    entry["steps"] = log.steps();
    auto [it, fresh] = traces_.emplace(log.trace(), index);
    if (fresh) {
      ++distinct_;
    } else {
      entry["duplicate_of"] = it->second;
    }
  }

  nlohmann::json summary() const {
    nlohmann::json out = {{"kind", plan_.explore == WarpOrder::Pct          ? "pct"
                                   : plan_.explore == WarpOrder::Exhaustive ? "exhaustive"
                                                                            : "random"},
                          {"ran", ran_}};
    if (plan_.explore == WarpOrder::Pct) out["depth"] = plan_.depth;
    if (plan_.explore == WarpOrder::Pct || plan_.explore == WarpOrder::Exhaustive)
      out["distinct"] = distinct_;
    if (plan_.explore == WarpOrder::Exhaustive) {
      const uint64_t orders = check::priority_orders(warps_);
      out["orders"] = orders;
      out["exhausted"] = warps_ != 0 && ran_ >= orders;
    }
    return out;
  }

 private:
  SweepPlan plan_;
  std::unordered_map<uint64_t, size_t> traces_;
  uint64_t ran_ = 0, distinct_ = 0;
  uint32_t warps_ = 0;
};

}  // namespace

Result<Sweep> sweep_schedules(const WorkloadRunner& runner,
                              const std::vector<tasks::Workload>& workloads,
                              const SweepPlan& sweep_plan, const SweepChecker& checker,
                              const std::function<void(const nlohmann::json&)>& progress) {
  SetObserver hook = nullptr;
  if (Status found = observer_hook(checker.mode, hook); !found)
    return make_error(found.error().message);
  ObserverScope scope(hook, checker.observer);
  Sweep sweep;
  const std::vector<WarpSchedule> plan =
      sweep_plan.replay ? std::vector<WarpSchedule>{sweep_plan.replay_schedule}
                        : check::race_schedules(sweep_plan.schedules, sweep_plan.seed,
                                                sweep_plan.explore, sweep_plan.depth);
  Exploration explored(sweep_plan);
  for (size_t i = 0; i < plan.size(); ++i) {
    if (explored.exhausted(plan[i])) break;
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
                              check::schedule_label(plan[i]) + " schedule stopped early (" +
                              status + ": " + message +
                              "); the launches after the stop were not checked");
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
    nlohmann::json entry = {{"index", i},
                            {"schedule", check::schedule_name(plan[i])},
                            {"seed", check::schedule_seed(plan[i])},
                            {"label", check::schedule_label(plan[i])},
                            {"workloads", ran},
                            {"new_findings", found},
                            {"seconds", seconds_since(schedule_start)}};
    explored.add(plan[i], checker.log(), i, entry);
    sweep.schedules.push_back(std::move(entry));
  }
  sweep.exploration = explored.summary();
  return sweep;
}

}  // namespace kiln::sim::run
