// One worker process, supervised: started in its own process group with its stdout
// and stderr on pipes, its stdout split into lines for the caller, its stderr kept in
// a log file (and the tail in memory), killed as a group (SIGKILL) past its deadline,
// on cancel, or when the caller rejects its output. A worker that hangs or crashes
// never takes the server with it. An adapter over kiln's one supervisor,
// kiln/base/process.h.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/base/process.h"

namespace kiln::runner {

struct WorkerCommand {
  std::filesystem::path executable;
  std::vector<std::string> arguments;  // without argv[0]
  std::filesystem::path working_dir;
  std::filesystem::path stderr_log;  // the worker's stderr is appended here; empty: not kept
};

struct WorkerExit {
  enum class How {
    kExited,          // exit_code holds the status
    kSignaled,        // killed by a signal it did not get from us (a crash)
    kTimedOut,        // we killed it at the deadline
    kCancelled,       // we killed it because the job was cancelled
    kOutputRejected,  // we killed it because on_line returned false
    kSpawnFailed,     // it never ran; spawn_error says why
  };
  How how = How::kExited;
  int exit_code = 0;
  int signal = 0;
  std::string spawn_error;
  std::string stderr_tail;     // the last few KB of its stderr
  std::string output_problem;  // set when the output was rejected here (a line too long)
  std::chrono::duration<double> elapsed{0};
};

// Called with each complete stdout line (without the newline); returning false stops
// the worker (its output can no longer be trusted).
using LineHandler = std::function<bool(std::string_view line)>;

// Runs the worker to its end. `cancel` is polled every few tens of milliseconds.
// Lines longer than `max_line_bytes` count as rejected output.
WorkerExit run_worker(const WorkerCommand& command, std::chrono::steady_clock::time_point deadline,
                      const std::atomic<bool>& cancel, const LineHandler& on_line,
                      size_t max_line_bytes = 8u << 20);

// "SIGSEGV" for 11; "signal N" for one without a common name.
using kiln::signal_name;

}  // namespace kiln::runner
