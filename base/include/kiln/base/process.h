// The one process supervisor of kiln: every child kiln starts (nvcc, kiln-worker,
// kiln-sim-run, ncu, compute-sanitizer) runs through run_supervised. The child gets its own
// process group, /dev/null as stdin, a clean signal state and only descriptors 0, 1 and 2;
// its output comes back in chunks; the whole group is killed (SIGKILL) past the deadline,
// on cancel, when the stdout consumer refuses the output, and when the leader exits (so
// nothing it started outlives it). A program that cannot be started is a spawn failure
// with its errno, never a child exiting 127; no zombie is left behind.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

// What to run.
struct ProcessSpec {
  std::vector<std::string> argv;                 // argv[0] is the program; no shell
  std::filesystem::path working_dir;             // empty: this process's
  std::map<std::string, std::string> extra_env;  // added to, or replacing in, this environment
  bool search_path = false;                      // a program name without '/' is looked up in PATH
  std::filesystem::path stdout_file;  // set: stdout is written there (truncated), not handed on
  bool merge_stderr = false;          // stderr goes where stdout goes (on_stdout or stdout_file)
};

// When to stop it.
struct ProcessLimits {
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  const std::atomic<bool>* cancel = nullptr;  // polled every few tens of ms; true: kill it
};

// Where its output goes, in chunks as they arrive (empty functions discard it).
struct ProcessOutput {
  // Returning false refuses the output: the group is killed and the rest of stdout dropped.
  // Called once with an empty chunk at the end of the stream, so a consumer that buffers
  // (a line splitter) can hand on its rest, and still refuse it.
  std::function<bool(std::string_view chunk)> on_stdout;
  std::function<void(std::string_view chunk)> on_stderr;
};

struct ProcessExit {
  enum class How {
    kExited,       // exit_code holds its status
    kSignaled,     // killed by a signal it did not get from us (a crash); see signal
    kTimedOut,     // we killed it at the deadline
    kCancelled,    // we killed it because *cancel became true
    kRefused,      // we killed it because on_stdout returned false
    kSpawnFailed,  // it never ran; spawn_error says why
  };
  How how = How::kExited;
  int exit_code = 0;
  int signal = 0;
  int spawn_errno = 0;      // the errno of the call that failed (pipe, fork, chdir, exec)
  std::string spawn_error;  // what could not be done, the program named, the errno as text
  std::chrono::duration<double> elapsed{0};
};

// Runs the process to its end (and past it: until its pipes close, or 2 s after the leader
// exited when something outside its group still holds them). Safe to call from many
// threads at once. If a callback throws, the group is killed and reaped before the
// exception goes on.
ProcessExit run_supervised(const ProcessSpec& spec, const ProcessLimits& limits = {},
                           const ProcessOutput& output = {});

// "SIGSEGV" for 11; "signal N" for one without a common name.
std::string signal_name(int signal);

}  // namespace kiln
