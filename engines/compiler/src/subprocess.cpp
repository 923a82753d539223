#include "kiln/compiler/subprocess.h"

#include <signal.h>

#include <chrono>
#include <cstring>

#include "kiln/base/process.h"
#include "kiln/base/process_output.h"

namespace kiln::compiler {

namespace {

using Clock = std::chrono::steady_clock;

// A deadline `seconds` from now; none for a limit too large to represent.
Clock::time_point deadline_in(double seconds) {
  constexpr double kForever = 1e9;  // ~30 years
  if (!(seconds < kForever)) return Clock::time_point::max();
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

std::string ProcessResult::describe() const {
  if (!started) return "could not start: " + error;
  if (timed_out) return "timed out after " + std::to_string(static_cast<int>(seconds)) + " s";
  if (signal != 0)
    return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exit code " + std::to_string(exit_code);
}

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
  ProcessResult result;
  if (argv.empty()) {
    result.error = "empty command";
    return result;
  }
  ProcessSpec spec;
  spec.argv = argv;
  spec.working_dir = options.working_dir;
  spec.extra_env = options.extra_env;
  spec.search_path = true;  // "ncu", "g++": found as a shell would
  spec.stdout_file = options.stdout_file;
  spec.merge_stderr = options.stdout_file.empty();
  ProcessLimits limits;
  limits.deadline = deadline_in(options.timeout_seconds);
  OutputTail output(options.max_output);
  ProcessOutput consumers;
  consumers.on_stdout = [&](std::string_view chunk) {
    output.append(chunk);
    return true;
  };
  consumers.on_stderr = [&](std::string_view chunk) { output.append(chunk); };

  const ProcessExit exit = run_supervised(spec, limits, consumers);
  result.seconds = exit.elapsed.count();
  result.output = output.text();
  using How = ProcessExit::How;
  switch (exit.how) {
    case How::kSpawnFailed:
      result.error = exit.spawn_error;
      result.exit_code = 127;  // what a shell reports for a command it cannot run
      break;
    case How::kTimedOut:
      result.started = true;
      result.timed_out = true;
      break;
    case How::kExited:
      result.started = true;
      result.exit_code = exit.exit_code;
      break;
    case How::kSignaled:
    case How::kCancelled:  // neither happens here (no cancel flag, nothing refused),
    case How::kRefused:    // but both end in SIGKILL
      result.started = true;
      result.signal = exit.how == How::kSignaled ? exit.signal : SIGKILL;
      break;
  }
  return result;
}

}  // namespace kiln::compiler
