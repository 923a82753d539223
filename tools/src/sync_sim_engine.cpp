#include "sync_sim_engine.h"

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

uint32_t number(const std::string& s) {
  if (s.empty() || s.size() > 9 ||
      !std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); }))
    return 0;
  return static_cast<uint32_t>(std::stoul(s));
}

// "kernel.cu:47:7" -> file, line, column.
void parse_source(const std::string& text, check::Finding* f) {
  const size_t last = text.rfind(':');
  if (last == std::string::npos || last == 0) return;
  const size_t before = text.rfind(':', last - 1);
  if (before != std::string::npos && number(text.substr(before + 1, last - before - 1)) > 0) {
    f->source_file = text.substr(0, before);
    f->source_line = number(text.substr(before + 1, last - before - 1));
    f->source_column = number(text.substr(last + 1));
  } else {
    f->source_file = text.substr(0, last);
    f->source_line = number(text.substr(last + 1));
  }
}

check::FindingKind nearest_kind(const std::string& kind) {
  if (kind == "barrier_divergence" || kind == "exit_at_barrier")
    return check::FindingKind::BarrierDivergence;
  if (kind == "barrier_count_mismatch") return check::FindingKind::NamedBarrierMismatch;
  if (kind == "uninitialized_mbarrier") return check::FindingKind::MbarrierUninitialized;
  return check::FindingKind::SanitizerError;  // the protocol kinds have no static counterpart
}

SimSyncRun refuse(mcp::ErrorCode code, const std::string& message, const std::string& stage,
                  const std::string& stderr_tail = "", const std::string& next_step = "") {
  SimSyncRun run;
  mcp::ToolResult result = check_refusal("sim", code, message, next_step);
  if (!stage.empty()) result.structured["stage"] = stage;
  if (!stderr_tail.empty()) result.text += "\nstderr of kiln-sim-run:\n" + stderr_tail;
  run.refusal = std::move(result);
  return run;
}

}  // namespace

check::Finding sync_finding(const json& finding,
                            const std::function<std::string(std::string)>& shorten) {
  check::Finding f;
  const std::string kind = finding.value("kind", "synchronization");
  f.kind = nearest_kind(kind);
  f.severity = check::Severity::Error;
  f.function = finding.value("kernel", "");
  const json site = finding.value("site", json::object());
  parse_source(shorten(site.value("source", "")), &f);
  f.ptx_line = site.value("ptx_line", 0u);
  f.instruction = site.value("instruction", "");
  f.message = kind + ": " + shorten(finding.value("message", ""));
  if (finding.contains("earlier")) {
    const json& e = finding["earlier"];
    std::string where = shorten(e.value("source", ""));
    if (where.empty()) where = "PTX line " + std::to_string(e.value("ptx_line", 0));
    f.message += "; the earlier operation: " + e.value("instruction", "") + " at " + where;
  }
  std::string schedules;
  for (const auto& s : finding.value("schedules", json::array()))
    schedules += (schedules.empty() ? "" : ", ") + s.get<std::string>();
  f.message += "; seen under schedule(s) " + schedules;
  f.fix_hint = finding.value("fix", "");
  f.cause = kind;
  return f;
}

SimSyncRun run_sim_synccheck(const SimulateToolConfig& config, const tasks::Task& task,
                             const Candidate& candidate, const json& arguments,
                             mcp::CallContext& context) {
  if (task.sim_workloads.empty())
    return refuse(mcp::ErrorCode::kInvalidArguments,
                  "task " + task.name + " has no sim_workloads to run under the checker",
                  "arguments", "", "use engine \"static\" or \"gpu\"");
  const int schedules = arguments.value("schedules", kDefaultSyncSchedules);
  const uint64_t seed = arguments.value("seed", uint64_t{1});
  const double time_limit = arguments.value("time_limit_s", kDefaultTimeLimitSeconds);
  std::vector<std::string> workloads = arguments.value("workloads", std::vector<std::string>());
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
  std::vector<std::string> argv = {"--task",
                                   task.dir.string(),
                                   "--source",
                                   source.string(),
                                   "--build-dir",
                                   (dir.path() / "build").string(),
                                   "--synccheck",
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
        if (event.is_object() && event.value("event", "") == "synccheck_workload") {
          ++done;
          context.progress(static_cast<double>(done + 1), static_cast<double>(runs + 1),
                           "schedule " + std::to_string(event.value("schedule", 0)) + ", " +
                               event.value("workload", "") + ": " + event.value("status", ""));
        } else if (event.is_object() && event.contains("event")) {
          context.progress(1, static_cast<double>(runs + 1), "built; running the checker");
        } else {
          last_line = std::string(line);
        }
        return true;
      });
  const std::string stderr_tail = shorten(run.stderr_tail);
  switch (run.exit.how) {
    case ProcessExit::How::kSpawnFailed:
      return refuse(mcp::ErrorCode::kUnavailable,
                    "cannot start " + config.sim_runner.string() + ": " + run.exit.spawn_error,
                    "start", "", "build the kiln-sim-run target, or install it next to kiln");
    case ProcessExit::How::kCancelled:
      return refuse(mcp::ErrorCode::kRunFailed, "cancelled: the sync check was stopped",
                    "cancelled");
    case ProcessExit::How::kTimedOut:
      return refuse(mcp::ErrorCode::kRunFailed,
                    "the sync check ran past time_limit_s per schedule (" +
                        std::to_string(time_limit) + " s)",
                    "time_limit", stderr_tail,
                    "pass fewer `workloads` or `schedules`, or a larger time_limit_s");
    case ProcessExit::How::kSignaled:
      return refuse(mcp::ErrorCode::kRunFailed,
                    "kiln-sim-run crashed (" + signal_name(run.exit.signal) +
                        ") during the sync check; the candidate's host code runs in it",
                    "crashed", stderr_tail,
                    "check kiln_launch's host-side pointer use, and simulate first");
    case ProcessExit::How::kRefused:
      return refuse(mcp::ErrorCode::kRunFailed,
                    "kiln-sim-run's output could not be read: " + run.output_problem, "output",
                    stderr_tail);
    case ProcessExit::How::kExited:
      break;
  }
  const json report = json::parse(last_line, nullptr, false);
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
        build ? "run compile for file:line diagnostics, fix them, then synccheck again" : "");
  }
  SimSyncRun out;
  auto shorten_fn = [&shorten](std::string text) { return shorten(std::move(text)); };
  for (const auto& f : report.value("findings", json::array())) {
    out.report.findings.push_back(sync_finding(f, shorten_fn));
    out.kinds.push_back(f.value("kind", ""));
  }
  for (const auto& note : report.value("notes", json::array()))
    out.report.notes.push_back(shorten(note.get<std::string>()));
  const json coverage = report.value("coverage", json::object());
  if (coverage.value("launches", 1) == 0)
    out.report.notes.push_back(
        "the candidate launched no kernel under the checker, so nothing was checked");
  out.report.finish();
  if (report.value("verdict", "") == "incomplete" && out.report.findings.empty())
    out.report.verdict = check::Verdict::Incomplete;
  out.uniform_barriers = coverage.value("uniform_barriers", uint64_t{0});
  out.schedules = schedules;
  out.extra = {{"schedules", report.value("schedules", json::array()).size()},
               {"seed", seed},
               {"coverage", coverage}};
  return out;
}

}  // namespace kiln::tools
