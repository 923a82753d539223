#include "kiln/runner/worker_process.h"

#include <cstdio>
#include <memory>

#include "kiln/base/process_output.h"

namespace kiln::runner {

namespace {

constexpr size_t kStderrTailBytes = 8192;

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

}  // namespace

WorkerExit run_worker(const WorkerCommand& command, std::chrono::steady_clock::time_point deadline,
                      const std::atomic<bool>& cancel, const LineHandler& on_line,
                      size_t max_line_bytes) {
  ProcessSpec spec;
  spec.argv = {command.executable.string()};
  spec.argv.insert(spec.argv.end(), command.arguments.begin(), command.arguments.end());
  spec.working_dir = command.working_dir;
  ProcessLimits limits;
  limits.deadline = deadline;
  limits.cancel = &cancel;

  LineSplitter lines(on_line, max_line_bytes);
  OutputTail tail(kStderrTailBytes);
  std::unique_ptr<std::FILE, FileCloser> log(
      command.stderr_log.empty() ? nullptr : std::fopen(command.stderr_log.c_str(), "ae"));
  ProcessOutput output;
  output.on_stdout = [&](std::string_view chunk) { return lines.feed(chunk); };
  output.on_stderr = [&](std::string_view chunk) {
    if (log) std::fwrite(chunk.data(), 1, chunk.size(), log.get());
    tail.append(chunk);
  };

  const ProcessExit exit = run_supervised(spec, limits, output);
  WorkerExit result;
  result.elapsed = exit.elapsed;
  result.stderr_tail = tail.text();
  if (!lines.problem().empty()) result.output_problem = "the worker wrote " + lines.problem();
  using How = ProcessExit::How;
  switch (exit.how) {
    case How::kExited:
      result.how = WorkerExit::How::kExited;
      result.exit_code = exit.exit_code;
      break;
    case How::kSignaled:
      result.how = WorkerExit::How::kSignaled;
      result.signal = exit.signal;
      break;
    case How::kTimedOut:
      result.how = WorkerExit::How::kTimedOut;
      break;
    case How::kCancelled:
      result.how = WorkerExit::How::kCancelled;
      break;
    case How::kRefused:
      result.how = WorkerExit::How::kOutputRejected;
      break;
    case How::kSpawnFailed:
      result.how = WorkerExit::How::kSpawnFailed;
      result.spawn_error = exit.spawn_error;
      break;
  }
  return result;
}

}  // namespace kiln::runner
