#include "sim_checker_run.h"

#include <algorithm>
#include <cctype>
#include <fstream>

#include "check_report_output.h"
#include "kiln/check/finding.h"
#include "sim_process.h"

namespace kiln::tools {

using json = nlohmann::json;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr double kDefaultTimeLimitSeconds = 120;

SimCheckerRun refuse(mcp::ErrorCode code, const std::string& message, const std::string& stage,
                     const std::string& stderr_tail = "", const std::string& next_step = "") {
  SimCheckerRun run;
  mcp::ToolResult result = check_refusal("sim", code, message, next_step);
  if (!stage.empty()) result.structured["stage"] = stage;
  if (!stderr_tail.empty()) result.text += "\nstderr of kiln-sim-run:\n" + stderr_tail;
  run.refusal = std::move(result);
  return run;
}

uint32_t number(const std::string& s) {
  if (s.empty() || s.size() > 9 ||
      !std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); }))
    return 0;
  return static_cast<uint32_t>(std::stoul(s));
}

// The refusal for a kiln-sim-run that did not end with a report, if it did not.
std::optional<SimCheckerRun> refusal_for_exit(const SimRun& run, const SimulateToolConfig& config,
                                              const SimChecker& checker, double time_limit,
                                              const std::string& stderr_tail) {
  switch (run.exit.how) {
    case ProcessExit::How::kSpawnFailed:
      return refuse(mcp::ErrorCode::kUnavailable,
                    "cannot start " + config.sim_runner.string() + ": " + run.exit.spawn_error,
                    "start", "", "build the kiln-sim-run target, or install it next to kiln");
    case ProcessExit::How::kCancelled:
      return refuse(mcp::ErrorCode::kRunFailed, "cancelled: the " + checker.work + " was stopped",
                    "cancelled");
    case ProcessExit::How::kTimedOut:
      return refuse(mcp::ErrorCode::kRunFailed,
                    "the " + checker.work + " ran past time_limit_s per schedule (" +
                        std::to_string(time_limit) + " s)",
                    "time_limit", stderr_tail,
                    "pass fewer `workloads` or `schedules`, or a larger time_limit_s");
    case ProcessExit::How::kSignaled:
      return refuse(mcp::ErrorCode::kRunFailed,
                    "kiln-sim-run crashed (" + signal_name(run.exit.signal) + ") during the " +
                        checker.work + "; the candidate's host code runs in it",
                    "crashed", stderr_tail,
                    "check kiln_launch's host-side pointer use, and simulate first");
    case ProcessExit::How::kRefused:
      return refuse(mcp::ErrorCode::kRunFailed,
                    "kiln-sim-run's output could not be read: " + run.output_problem, "output",
                    stderr_tail);
    case ProcessExit::How::kExited:
      break;
  }
  return std::nullopt;
}

}  // namespace

json sim_checker_properties(int max_schedules) {
  return {
      {"schedules",
       {{"type", "integer"},
        {"minimum", 1},
        {"maximum", max_schedules},
        {"description",
         "sim: warp schedules to run (default 3): in order, reversed, then ones of the "
         "`explore` kind; with explore \"exhaustive\", the most to try"}}},
      {"explore",
       {{"type", "string"},
        {"enum", {"random", "pct", "exhaustive"}},
        {"description",
         "sim: what the schedules after the first two are. random (default): rounds of warps "
         "in random order with random slices. pct: one synchronization step at a time by "
         "random warp priorities with depth-1 change points (finds orderings random rounds "
         "miss, such as a warp delayed while others run ahead: reused mbarrier phases); "
         "exhaustive: every priority order of a cluster's warps (small CTAs: 4 warps are 24 "
         "orders), until they run out or `schedules` is reached"}}},
      {"depth",
       {{"type", "integer"},
        {"minimum", 1},
        {"maximum", 16},
        {"description",
         "sim, explore pct: the deepest bug aimed at (default 3; the schedules cycle through "
         "depths 1..depth)"}}},
      {"replay",
       {{"type", "string"},
        {"pattern", "^(in_order|reversed|random:[0-9]+|pct:[0-9]+:d[0-9]+|exhaustive:[0-9]+)$"},
        {"description",
         "sim: run only the schedule a finding names (e.g. \"pct:7:d2\"), with the same "
         "seed for the same inputs"}}},
      {"seed",
       {{"type", "integer"},
        {"minimum", 0},
        {"description", "sim: seeds the inputs and the first random or pct schedule (default 1)"}}},
      {"workloads",
       {{"type", "array"},
        {"items", {{"type", "string"}}},
        {"description", "sim: names from the task's sim_workloads (default: all)"}}},
      {"time_limit_s",
       {{"type", "number"},
        {"exclusiveMinimum", 0},
        {"maximum", 3600},
        {"description", "sim: wall-time limit per schedule (default 120)"}}}};
}

json exploration_summary(const json& report) {
  json out = report.value("exploration", json::object());
  json found = json::array();
  for (const json& s : report.value("schedules", json::array())) {
    const size_t n = s.value("new_findings", json::array()).size();
    if (n == 0) continue;
    const std::string label = s.value("label", s.value("schedule", ""));
    found.push_back({{"schedule", label}, {"findings", n}});
  }
  out["found"] = found;
  return out;
}

void set_source_location(const std::string& text, check::Finding* finding) {
  const size_t last = text.rfind(':');
  if (last == std::string::npos || last == 0) return;
  const size_t before = text.rfind(':', last - 1);
  if (before != std::string::npos && number(text.substr(before + 1, last - before - 1)) > 0) {
    finding->source_file = text.substr(0, before);
    finding->source_line = number(text.substr(before + 1, last - before - 1));
    finding->source_column = number(text.substr(last + 1));
  } else {
    finding->source_file = text.substr(0, last);
    finding->source_line = number(text.substr(last + 1));
  }
}

SimCheckerRun run_sim_checker(const SimulateToolConfig& config, const tasks::Task& task,
                              const Candidate& candidate, const json& arguments,
                              mcp::CallContext& context, const SimChecker& checker) {
  if (task.sim_workloads.empty())
    return refuse(mcp::ErrorCode::kInvalidArguments,
                  "task " + task.name + " has no sim_workloads to run under the " + checker.checker,
                  "arguments", "", checker.no_sim_engine);
  const int schedules = arguments.value("schedules", checker.default_schedules);
  const uint64_t seed = arguments.value("seed", uint64_t{1});
  const std::string explore = arguments.value("explore", std::string("random"));
  const int depth = arguments.value("depth", 3);
  const std::string replay = arguments.value("replay", std::string());
  const double time_limit = arguments.value("time_limit_s", kDefaultTimeLimitSeconds);
  const auto workloads = arguments.value("workloads", std::vector<std::string>());
  for (const std::string& name : workloads)
    if (std::none_of(task.sim_workloads.begin(), task.sim_workloads.end(),
                     [&](const tasks::Workload& w) { return w.name == name; }))
      return refuse(mcp::ErrorCode::kInvalidArguments,
                    "task " + task.name + " has no sim_workload '" + name + "'", "arguments", "",
                    "pass names from get_task's sim workloads, or leave workloads out");

  CallDir dir(config.work_dir.empty() ? fs::temp_directory_path() / "kiln-simulate"
                                      : config.work_dir);
  if (dir.path().empty())
    return refuse(mcp::ErrorCode::kUnavailable, "cannot make a build folder", "build", "",
                  "check that the disk is writable");
  const std::string name = candidate.display_name();
  PathShortener shorten;
  fs::path source = candidate.file;
  if (source.empty()) {
    source = dir.path() / "kernel.cu";
    std::ofstream(source) << candidate.source;
  }
  shorten.add(source.string(), name);
  shorten.add(dir.path().string() + "/", "");

  std::vector<std::string> argv = sim_task_arguments(task);
  argv.insert(argv.end(),
              {"--source", source.string(), "--build-dir", (dir.path() / "build").string(),
               "--" + checker.mode, "--schedules", std::to_string(schedules), "--seed",
               std::to_string(seed), "--explore", explore, "--depth", std::to_string(depth),
               "--time-limit", std::to_string(time_limit), "--progress"});
  if (!replay.empty()) argv.insert(argv.end(), {"--replay", replay});
  for (const std::string& workload : workloads) argv.insert(argv.end(), {"--workload", workload});
  const size_t runs = static_cast<size_t>(replay.empty() ? schedules : 1) *
                      (workloads.empty() ? task.sim_workloads.size() : workloads.size());
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                         config.build_allowance_s + time_limit * schedules));
  CancelWatch watch(context);
  context.progress(0, static_cast<double>(runs + 1), "building " + name + " for the simulator");
  size_t done = 0;
  std::string last_line;
  const std::string workload_event = checker.mode + "_workload";
  const SimRun run = run_sim_runner(
      config.sim_runner, argv, dir.path(), deadline, watch.flag(), [&](std::string_view line) {
        const json event = json::parse(line, nullptr, false);
        if (event.is_object() && event.value("event", "") == workload_event) {
          ++done;
          std::string text = "schedule " + std::to_string(event.value("schedule", 0)) + ", " +
                             event.value("workload", "") + ": " + event.value("status", "");
          if (checker.progress_detail) text += checker.progress_detail(event);
          context.progress(static_cast<double>(done + 1), static_cast<double>(runs + 1), text);
        } else if (event.is_object() && event.contains("event")) {
          context.progress(1, static_cast<double>(runs + 1),
                           "built; running the " + checker.checker);
        } else {
          last_line = std::string(line);
        }
        return true;
      });
  const std::string stderr_tail = shorten(run.stderr_tail);
  if (auto refusal = refusal_for_exit(run, config, checker, time_limit, stderr_tail))
    return std::move(*refusal);
  json report = json::parse(last_line, nullptr, false);
  if (!report.is_object() || !report.contains("ok"))
    return refuse(mcp::ErrorCode::kRunFailed,
                  "kiln-sim-run exited with status " + std::to_string(run.exit.exit_code) +
                      " without a report",
                  "crashed", stderr_tail);
  if (!report["ok"].get<bool>()) {
    const std::string stage = report.value("stage", "");
    const bool build = stage == "build_candidate" || stage == "load_candidate";
    return refuse(
        build ? mcp::ErrorCode::kCompileError : mcp::ErrorCode::kUnavailable,
        shorten(report.value("error", "kiln-sim-run failed")), stage, "",
        build ? "run compile for file:line diagnostics, fix them, then " + checker.mode + " again"
              : "");
  }
  SimCheckerRun out;
  out.report = std::move(report);
  out.shorten = std::move(shorten);
  out.schedules = schedules;
  out.seed = seed;
  out.explore = explore;
  return out;
}

}  // namespace kiln::tools
