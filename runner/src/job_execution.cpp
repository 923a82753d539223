#include "kiln/runner/job_execution.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "kiln/runner/worker_output.h"
#include "kiln/runner/worker_process.h"

namespace kiln::runner {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// The last non-empty line of a log, for a one-line reason.
std::string last_line(const std::string& text) {
  auto end = text.find_last_not_of("\r\n ");
  if (end == std::string::npos) return "";
  auto newline = text.rfind('\n', end);
  size_t start = newline == std::string::npos ? 0 : newline + 1;
  return clip(std::string_view(text).substr(start, end + 1 - start), 300);
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

}  // namespace

JobOutcome execute_job(const JobLaunch& launch, const std::atomic<bool>& cancel,
                       const std::function<void(json event)>& on_event) {
  const auto started = Clock::now();
  auto stage_started = started;
  std::string stage = "start";
  spdlog::info("job {} stage start on GPU {} (limit {} s)", launch.id, launch.gpu,
               seconds_text(launch.job_seconds));

  WorkerOutput output([&](json event) {
    if (event["event"] == "stage") {
      auto now = Clock::now();
      spdlog::info("job {} stage {} (after {} {:.2f} s)", launch.id,
                   event["stage"].get<std::string>(), stage,
                   std::chrono::duration<double>(now - stage_started).count());
      stage = event["stage"].get<std::string>();
      stage_started = now;
    }
    on_event(std::move(event));
  });
  WorkerCommand command;
  command.executable = launch.worker;
  command.arguments = {"--job", (launch.job_dir / "job.json").string(), "--gpu",
                       std::to_string(launch.gpu)};
  command.working_dir = launch.job_dir;
  command.stderr_log = launch.job_dir / "worker.log";
  auto deadline = started + std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(launch.job_seconds));
  WorkerExit exit = run_worker(command, deadline, cancel,
                               [&](std::string_view line) { return output.add_line(line); });

  JobOutcome outcome;
  outcome.last_stage = output.last_stage();
  const std::string in_stage = " in stage '" + outcome.last_stage + "'";
  auto fail = [&](Failure failure, const std::string& error, bool with_log) {
    outcome.result = make_error_result(launch.expect, outcome.last_stage, failure, error,
                                       with_log ? clip(exit.stderr_tail, 2000) : "");
  };
  switch (exit.how) {
    case WorkerExit::How::kSpawnFailed:
      fail(Failure::kSpawn,
           "the worker did not start: " + exit.spawn_error +
               "; check `kiln runner --worker` names a built kiln-worker",
           false);
      break;
    case WorkerExit::How::kTimedOut:
      fail(Failure::kTimeout,
           "timeout: the job passed its " + seconds_text(launch.job_seconds) + " s limit" +
               in_stage +
               " and the worker was killed; look for a hang (a deadlock or endless loop: run "
               "synccheck) "
               "or benchmark fewer workloads",
           true);
      break;
    case WorkerExit::How::kCancelled:
      outcome.cancelled = true;
      fail(Failure::kCancelled, "cancelled" + in_stage + "; the worker was killed", false);
      break;
    case WorkerExit::How::kOutputRejected:
      fail(Failure::kBadOutput,
           "bad output" + in_stage + ": " +
               (output.problem().empty() ? exit.output_problem : output.problem()) +
               "; the worker was killed and nothing it reported is trusted",
           true);
      break;
    case WorkerExit::How::kSignaled:
      fail(Failure::kCrashed,
           "crashed (signal " + std::to_string(exit.signal) + ", " + signal_name(exit.signal) +
               ")" + in_stage +
               ": the worker died, most often from a candidate that writes out of bounds "
               "or corrupts memory; run racecheck and simulate on it",
           true);
      break;
    case WorkerExit::How::kExited:
      if (exit.exit_code != 0) {
        std::string why = last_line(exit.stderr_tail);
        fail(Failure::kExitCode,
             "exit code " + std::to_string(exit.exit_code) + in_stage +
                 ": the worker itself failed" + (why.empty() ? "" : " (" + why + ")") +
                 "; see log_tail",
             true);
      } else if (!output.result()) {
        fail(Failure::kNoResult,
             "no result: the worker exited" + in_stage + " without writing a result line", true);
      } else if (auto problem = check_result(*output.result(), launch.expect)) {
        fail(Failure::kInvalidResult,
             "invalid result" + in_stage + ": " + *problem +
                 "; the runner does not pass on numbers it cannot trust",
             false);
      } else {
        outcome.result = *output.result();
      }
      break;
  }
  const std::string status = outcome.result.value("status", "?");
  spdlog::info("job {} ended in stage {}: {} after {:.2f} s{}", launch.id, outcome.last_stage,
               status, std::chrono::duration<double>(Clock::now() - started).count(),
               status == "error" ? ": " + outcome.result.value("error", "") : "");
  return outcome;
}

}  // namespace kiln::runner
