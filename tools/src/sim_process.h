// kiln-sim-run as a child of a tool call (simulate, racecheck's sim engine): a fresh build
// folder per call, the client's cancellation copied into a flag, and the process run through
// kiln's one supervisor with its stdout split into JSON lines and the end of its stderr kept.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "kiln/base/process.h"
#include "kiln/base/process_output.h"
#include "kiln/mcp/call_context.h"
#include "kiln/tasks/task.h"

namespace kiln::tools {

// A fresh folder for one call's builds under `parent`; removed when the call ends. path() is
// empty when it could not be made.
class CallDir {
 public:
  explicit CallDir(const std::filesystem::path& parent);
  ~CallDir();
  CallDir(const CallDir&) = delete;
  CallDir& operator=(const CallDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Copies the client's cancellation into the flag run_supervised polls, until destroyed.
class CancelWatch {
 public:
  explicit CancelWatch(mcp::CallContext& context);
  const std::atomic<bool>& flag() const { return cancelled_; }

 private:
  std::atomic<bool> cancelled_{false};
  std::jthread thread_;  // last: joined before cancelled_ goes away
};

// kiln-sim-run's arguments naming `task`: --task DIR for a bundle, --task zoo:ID --zoo-dir DIR
// for a zoo task (its reference is linked into kiln-sim-run, not built).
std::vector<std::string> sim_task_arguments(const tasks::Task& task);

// How a kiln-sim-run ended, with the end of its stderr.
struct SimRun {
  ProcessExit exit;
  std::string stderr_tail;
  std::string output_problem;  // set when a stdout line was too long to be a report
};

// Runs `program` with `arguments` in `dir`, each stdout line to on_line, killed at the deadline
// or on cancel.
SimRun run_sim_runner(const std::filesystem::path& program,
                      const std::vector<std::string>& arguments, const std::filesystem::path& dir,
                      std::chrono::steady_clock::time_point deadline,
                      const std::atomic<bool>& cancel, LineSplitter::Handler on_line);

}  // namespace kiln::tools
