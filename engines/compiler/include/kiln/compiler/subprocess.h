// Runs a program (argv, no shell; a bare name is looked up in PATH) with its stdout and
// stderr captured together, a wall-clock limit, and its own process group so a timeout kills
// everything it started. A thin adapter over kiln's one supervisor, kiln/base/process.h.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace kiln::compiler {

struct ProcessResult {
  bool started = false;  // false: it never ran; error says why (exit_code 127 if exec failed)
  bool timed_out = false;
  int exit_code = -1;  // valid when exited normally
  int signal = 0;      // nonzero when killed by a signal
  double seconds = 0;
  std::string output;  // stdout and stderr interleaved, up to max_output bytes (the tail is kept)
  std::string error;   // why it could not start

  bool ok() const { return started && !timed_out && signal == 0 && exit_code == 0; }
  std::string describe() const;  // "exit code 2" / "killed by signal 9" / "timed out after 300 s"
};

struct ProcessOptions {
  double timeout_seconds = 300;
  size_t max_output = 4 << 20;
  std::map<std::string, std::string>
      extra_env;            // added to (or replacing in) the current environment
  std::string stdout_file;  // when set, stdout goes here instead of `output`
  std::string working_dir;  // when set, the program starts there
};

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

}  // namespace kiln::compiler
