#include "sim_process.h"

#include <unistd.h>

namespace kiln::tools {

namespace fs = std::filesystem;

namespace {
constexpr size_t kStderrTailBytes = 8192;   // of kiln-sim-run's stderr, kept for errors
constexpr size_t kMaxLineBytes = 8u << 20;  // one JSON line of kiln-sim-run; longer: garbage
}  // namespace

std::vector<std::string> sim_task_arguments(const tasks::Task& task) {
  if (task.from_zoo())
    return {"--task", task.name, "--zoo-dir", task.zoo_entry.parent_path().string()};
  return {"--task", task.dir.string()};
}

CallDir::CallDir(const fs::path& parent) {
  std::error_code error;
  fs::create_directories(parent, error);
  std::string pattern = (parent / "call-XXXXXX").string();
  if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
}

CallDir::~CallDir() {
  std::error_code error;
  if (!path_.empty()) fs::remove_all(path_, error);
}

CancelWatch::CancelWatch(mcp::CallContext& context)
    : thread_([this, &context](std::stop_token stop) {
        while (!stop.stop_requested()) {
          if (context.cancelled()) {
            cancelled_ = true;
            return;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
      }) {}

SimRun run_sim_runner(const fs::path& program, const std::vector<std::string>& arguments,
                      const fs::path& dir, std::chrono::steady_clock::time_point deadline,
                      const std::atomic<bool>& cancel, LineSplitter::Handler on_line) {
  ProcessSpec spec;
  spec.argv = {program.string()};
  spec.argv.insert(spec.argv.end(), arguments.begin(), arguments.end());
  spec.working_dir = dir;
  ProcessLimits limits;
  limits.deadline = deadline;
  limits.cancel = &cancel;
  LineSplitter lines(std::move(on_line), kMaxLineBytes);
  OutputTail tail(kStderrTailBytes);
  ProcessOutput output;
  output.on_stdout = [&](std::string_view chunk) { return lines.feed(chunk); };
  output.on_stderr = [&](std::string_view chunk) { tail.append(chunk); };
  SimRun run;
  run.exit = run_supervised(spec, limits, output);
  run.stderr_tail = tail.text();
  if (!lines.problem().empty()) run.output_problem = "it wrote " + lines.problem();
  return run;
}

}  // namespace kiln::tools
