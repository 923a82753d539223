#include "sim_run.h"

#include <chrono>
#include <cstdio>

#include "kiln/base/process.h"
#include "kiln/base/process_output.h"

namespace kiln::taskcheck {

using json = nlohmann::json;

namespace {
constexpr size_t kMaxLineBytes = 8u << 20;  // one report line; longer is not a report
constexpr size_t kStderrTail = 4000;
}  // namespace

SimOutcome run_sim(const SimRequest& request) {
  ProcessSpec spec;
  spec.argv = {
      request.program.string(),     "--task",      request.task_dir.string(),  "--source",
      request.source.string(),      "--build-dir", request.build_dir.string(), "--seed",
      std::to_string(request.seed), "--progress"};  // one JSON object per line, the report last
  if (!request.reference.empty())
    spec.argv.insert(spec.argv.end(), {"--reference", request.reference.string()});
  for (const auto& workload : request.workloads)
    spec.argv.insert(spec.argv.end(), {"--workload", workload});
  spec.working_dir = request.build_dir;
  std::error_code error;
  std::filesystem::create_directories(request.build_dir, error);

  ProcessLimits limits;
  limits.deadline = std::chrono::steady_clock::now() +
                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                        std::chrono::duration<double>(request.time_limit_s));
  std::string last;
  LineSplitter lines(
      [&](std::string_view line) {
        if (!line.empty()) last = std::string(line);
        return true;
      },
      kMaxLineBytes);
  OutputTail tail(kStderrTail);
  ProcessOutput output;
  output.on_stdout = [&](std::string_view chunk) { return lines.feed(chunk); };
  output.on_stderr = [&](std::string_view chunk) { tail.append(chunk); };
  const ProcessExit exit = run_supervised(spec, limits, output);

  SimOutcome out;
  out.seconds = exit.elapsed.count();
  switch (exit.how) {
    case ProcessExit::How::kSpawnFailed:
      out.problem = "cannot start " + request.program.string() + ": " + exit.spawn_error +
                    "; build the kiln-sim-run target (it must lie beside kiln)";
      return out;
    case ProcessExit::How::kTimedOut:
      out.problem = "kiln-sim-run ran past " +
                    std::to_string(static_cast<int>(request.time_limit_s)) +
                    " s; pass --sim-time-limit S, or fewer --sim-workload";
      return out;
    case ProcessExit::How::kSignaled:
      out.problem = "kiln-sim-run crashed (" + signal_name(exit.signal) + "): " + tail.text();
      return out;
    case ProcessExit::How::kCancelled:
    case ProcessExit::How::kRefused:
      out.problem = "kiln-sim-run's output could not be read: " + lines.problem();
      return out;
    case ProcessExit::How::kExited:
      break;
  }
  out.report = json::parse(last, nullptr, false);
  if (!out.report.is_object() || !out.report.contains("ok")) {
    out.problem = "kiln-sim-run exited with status " + std::to_string(exit.exit_code) +
                  " without a report: " + tail.text();
    out.report = json();
    return out;
  }
  out.ran = true;
  if (!out.report.value("ok", false)) {
    out.stage = out.report.value("stage", "");
    out.problem = out.report.value("error", "kiln-sim-run failed");
    return out;
  }
  out.passed = out.report.value("passed", 0);
  out.total = out.report.value("total", 0);
  return out;
}

std::string workload_summary(const json& report, bool failures_only) {
  std::string out;
  if (!report.is_object() || !report.contains("workloads")) return out;
  for (const auto& w : report["workloads"]) {
    const bool pass = w.value("pass", false);
    if (failures_only && pass) continue;
    std::string line =
        w.value("workload", w.value("name", std::string("?"))) + ": " + w.value("status", "?");
    const std::string message = w.value("message", "");
    if (!pass && !message.empty()) line += " (" + message.substr(0, 160) + ")";
    out += (out.empty() ? "" : "; ") + line;
  }
  return out;
}

}  // namespace kiln::taskcheck
