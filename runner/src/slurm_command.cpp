#include "kiln/runner/slurm_command.h"

#include "kiln/base/process.h"

namespace kiln::runner {

namespace {
constexpr size_t kMaxOutputBytes = 4u << 20;  // squeue of a busy cluster stays far below this
}

SlurmCommandResult ProcessSlurmCommandRunner::run(const std::vector<std::string>& argv,
                                                  std::chrono::seconds timeout) {
  SlurmCommandResult result;
  ProcessSpec spec;
  spec.argv = argv;
  spec.search_path = true;
  ProcessLimits limits;
  limits.deadline = std::chrono::steady_clock::now() + timeout;
  ProcessOutput output;
  output.on_stdout = [&](std::string_view chunk) {
    result.out.append(chunk);
    return result.out.size() <= kMaxOutputBytes;
  };
  output.on_stderr = [&](std::string_view chunk) {
    if (result.err.size() < kMaxOutputBytes) result.err.append(chunk);
  };
  const ProcessExit exit = run_supervised(spec, limits, output);
  const std::string name = argv.empty() ? "?" : argv[0];
  switch (exit.how) {
    case ProcessExit::How::kExited:
      result.ran = true;
      result.exit_code = exit.exit_code;
      break;
    case ProcessExit::How::kTimedOut:
      result.error = name + " did not answer within " + std::to_string(timeout.count()) +
                     " s (is slurmctld up? `scontrol ping`)";
      break;
    case ProcessExit::How::kSpawnFailed:
      result.error = "cannot run " + name + ": " + exit.spawn_error +
                     "; install Slurm's client tools (Debian: slurm-client) on the runner's host";
      break;
    case ProcessExit::How::kRefused:
      result.error = name + " wrote more than " + std::to_string(kMaxOutputBytes) + " bytes";
      break;
    case ProcessExit::How::kSignaled:
      result.error = name + " was killed by " + signal_name(exit.signal);
      break;
    case ProcessExit::How::kCancelled:
      result.error = name + " was cancelled";
      break;
  }
  return result;
}

}  // namespace kiln::runner
