#include "race_sim_engine.h"

#include <algorithm>
#include <cctype>
#include <fstream>

#include "check_report_output.h"
#include "sim_process.h"
#include "sim_report.h"

namespace kiln::tools {

using json = nlohmann::json;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr double kDefaultTimeLimitSeconds = 120;

// "kernel.cu:47:7" -> file, line, column (0 when absent).
void parse_source(const std::string& text, check::Finding* finding) {
  const size_t last = text.rfind(':');
  if (last == std::string::npos) return;
  const size_t before = text.rfind(':', last - 1);
  auto number = [](const std::string& s) -> uint32_t {
    if (s.empty() || s.size() > 9 ||
        !std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); }))
      return 0;
    return static_cast<uint32_t>(std::stoul(s));
  };
  if (before != std::string::npos && number(text.substr(before + 1, last - before - 1)) > 0) {
    finding->source_file = text.substr(0, before);
    finding->source_line = number(text.substr(before + 1, last - before - 1));
    finding->source_column = number(text.substr(last + 1));
  } else {
    finding->source_file = text.substr(0, last);
    finding->source_line = number(text.substr(last + 1));
  }
}

std::string side_text(const json& side, const std::function<std::string(std::string)>& shorten) {
  std::string where = side.value("source", "");
  where = where.empty() ? "PTX line " + std::to_string(side.value("ptx_line", 0)) : shorten(where);
  return side.value("access", "access") + (side.value("async", false) ? " (async copy)" : "") +
         " at " + where + " (" + side.value("instruction", "") + ")";
}

std::string schedules_text(const json& race) {
  std::string out;
  for (const auto& s : race.value("schedules", json::array()))
    out += (out.empty() ? "" : ", ") + s.get<std::string>();
  return out;
}

mcp::ToolResult sim_refusal(mcp::ErrorCode code, const std::string& message,
                            const std::string& stage, const std::string& stderr_tail = "",
                            const std::string& next_step = "") {
  mcp::ToolResult result = check_refusal("sim", code, message, next_step);
  if (!stage.empty()) result.structured["stage"] = stage;
  if (!stderr_tail.empty()) result.text += "\nstderr of kiln-sim-run:\n" + stderr_tail;
  return result;
}

}  // namespace

check::Finding race_finding(const json& race,
                            const std::function<std::string(std::string)>& shorten) {
  check::Finding f;
  f.kind = check::FindingKind::DataRace;
  f.severity = check::Severity::Error;
  f.function = race.value("kernel", "");
  const json& first = race.contains("first") ? race["first"] : json::object();
  const json& second = race.contains("second") ? race["second"] : json::object();
  parse_source(shorten(second.value("source", "")), &f);
  f.ptx_line = second.value("ptx_line", 0u);
  f.instruction = second.value("instruction", "");
  std::string kind = race.value("kind", "race");
  std::transform(kind.begin(), kind.end(), kind.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  f.message = kind + " race (" + race.value("cause", "unordered") + ") on " +
              std::to_string(race.value("bytes", 0)) + " byte(s) of " +
              race.value("space", "memory") + " memory at " + race.value("address", "?") + ": " +
              side_text(first, shorten) + " is not ordered with the " + side_text(second, shorten) +
              "; seen under schedule(s) " + schedules_text(race) + " (" +
              std::to_string(race.value("occurrences", 0)) + " times)";
  f.fix_hint = race.value("fix", "");
  return f;
}

mcp::ToolResult run_sim_racecheck(const SimulateToolConfig& config, const tasks::Task& task,
                                  const Candidate& candidate, const json& arguments,
                                  mcp::CallContext& context) {
  if (task.sim_workloads.empty())
    return sim_refusal(mcp::ErrorCode::kInvalidArguments,
                       "task " + task.name + " has no sim_workloads to run under the detector",
                       "arguments", "", "use engine \"gpu\" (compute-sanitizer on a runner)");
  const int schedules = arguments.value("schedules", kDefaultRaceSchedules);
  const uint64_t seed = arguments.value("seed", uint64_t{1});
  const double time_limit = arguments.value("time_limit_s", kDefaultTimeLimitSeconds);
  std::vector<std::string> workloads = arguments.value("workloads", std::vector<std::string>());
  for (const std::string& name : workloads)
    if (std::none_of(task.sim_workloads.begin(), task.sim_workloads.end(),
                     [&](const tasks::Workload& w) { return w.name == name; }))
      return sim_refusal(mcp::ErrorCode::kInvalidArguments,
                         "task " + task.name + " has no sim_workload '" + name + "'", "arguments",
                         "", "pass names from get_task's sim workloads, or leave workloads out");

  CallDir dir(config.work_dir.empty() ? fs::temp_directory_path() / "kiln-simulate"
                                      : config.work_dir);
  if (dir.path().empty())
    return sim_refusal(mcp::ErrorCode::kUnavailable, "cannot make a build folder", "build", "",
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

  std::vector<std::string> argv = {"--task",
                                   task.dir.string(),
                                   "--source",
                                   source.string(),
                                   "--build-dir",
                                   (dir.path() / "build").string(),
                                   "--racecheck",
                                   "--schedules",
                                   std::to_string(schedules),
                                   "--seed",
                                   std::to_string(seed),
                                   "--time-limit",
                                   std::to_string(time_limit),
                                   "--progress"};
  for (const std::string& workload : workloads) argv.insert(argv.end(), {"--workload", workload});
  const size_t runs = static_cast<size_t>(schedules) *
                      (workloads.empty() ? task.sim_workloads.size() : workloads.size());
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                         config.build_allowance_s + time_limit * schedules));
  CancelWatch watch(context);
  context.progress(0, static_cast<double>(runs + 1), "building " + name + " for the simulator");
  size_t done = 0;
  std::string last_line;
  const SimRun run = run_sim_runner(
      config.sim_runner, argv, dir.path(), deadline, watch.flag(), [&](std::string_view line) {
        const json event = json::parse(line, nullptr, false);
        if (event.is_object() && event.value("event", "") == "racecheck_workload") {
          ++done;
          context.progress(static_cast<double>(done + 1), static_cast<double>(runs + 1),
                           "schedule " + std::to_string(event.value("schedule", 0)) + ", " +
                               event.value("workload", "") + ": " + event.value("status", "") +
                               ", " + std::to_string(event.value("findings", 0)) + " race(s)");
        } else if (event.is_object() && event.contains("event")) {
          context.progress(1, static_cast<double>(runs + 1), "built; running the detector");
        } else {
          last_line = std::string(line);
        }
        return true;
      });
  const std::string stderr_tail = shorten(run.stderr_tail);
  switch (run.exit.how) {
    case ProcessExit::How::kSpawnFailed:
      return sim_refusal(mcp::ErrorCode::kUnavailable,
                         "cannot start " + config.sim_runner.string() + ": " + run.exit.spawn_error,
                         "start", "", "build the kiln-sim-run target, or install it next to kiln");
    case ProcessExit::How::kCancelled:
      return sim_refusal(mcp::ErrorCode::kRunFailed, "cancelled: the race check was stopped",
                         "cancelled");
    case ProcessExit::How::kTimedOut:
      return sim_refusal(mcp::ErrorCode::kRunFailed,
                         "the race check ran past time_limit_s per schedule (" +
                             std::to_string(time_limit) + " s)",
                         "time_limit", stderr_tail,
                         "pass fewer `workloads` or `schedules`, or a larger time_limit_s");
    case ProcessExit::How::kSignaled:
      return sim_refusal(mcp::ErrorCode::kRunFailed,
                         "kiln-sim-run crashed (" + signal_name(run.exit.signal) +
                             ") during the race check; the candidate's host code runs in it",
                         "crashed", stderr_tail,
                         "check kiln_launch's host-side pointer use, and simulate first");
    case ProcessExit::How::kRefused:
      return sim_refusal(mcp::ErrorCode::kRunFailed,
                         "kiln-sim-run's output could not be read: " + run.output_problem, "output",
                         stderr_tail);
    case ProcessExit::How::kExited:
      break;
  }
  const json report = json::parse(last_line, nullptr, false);
  if (!report.is_object() || !report.contains("ok"))
    return sim_refusal(mcp::ErrorCode::kRunFailed,
                       "kiln-sim-run exited with status " + std::to_string(run.exit.exit_code) +
                           " without a report",
                       "crashed", stderr_tail);
  if (!report["ok"].get<bool>()) {
    const std::string stage = report.value("stage", "");
    const bool build = stage == "build_candidate" || stage == "load_candidate";
    return sim_refusal(build ? mcp::ErrorCode::kCompileError : mcp::ErrorCode::kUnavailable,
                       shorten(report.value("error", "kiln-sim-run failed")), stage, "",
                       build ? "run compile for file:line diagnostics, fix them, then racecheck "
                               "again"
                             : "");
  }

  check::CheckReport checked;
  auto shorten_fn = [&shorten](std::string text) { return shorten(std::move(text)); };
  for (const auto& race : report.value("findings", json::array()))
    checked.findings.push_back(race_finding(race, shorten_fn));
  for (const auto& note : report.value("notes", json::array()))
    checked.notes.push_back(shorten(note.get<std::string>()));
  if (report.value("coverage", json::object()).value("launches", 1) == 0)
    checked.notes.push_back(
        "the candidate launched no kernel under the detector, so nothing was checked");
  checked.finish();
  if (report.value("verdict", "") == "incomplete" && checked.findings.empty())
    checked.verdict = check::Verdict::Incomplete;

  CheckOutputOptions output;
  output.tool = "racecheck";
  output.engine = "sim";
  output.where =
      "the simulator, " + std::to_string(schedules) + " schedule(s), seed " + std::to_string(seed);
  output.limit = arguments.value("limit", size_t{20});
  output.offset = arguments.value("offset", size_t{0});
  output.extra = {{"schedules", report.value("schedules", json::array()).size()},
                  {"seed", seed},
                  {"coverage", report.value("coverage", json::object())}};
  return check_report_result(checked, output);
}

}  // namespace kiln::tools
