// Runs a function in a forked child process with a time limit, so a kernel that crashes
// (and poisons its CUDA context) or hangs takes down only that child. The parent must
// not have touched CUDA before forking.
#pragma once

#include <functional>
#include <string>

namespace kiln::zoo {

struct ChildOutcome {
  bool started = false;    // fork succeeded
  bool timed_out = false;  // killed (SIGKILL) after the time limit
  bool exited = false;     // returned normally; exit_code is valid
  int exit_code = 0;
  int signal = 0;  // the signal that ended it, when !exited
  double seconds = 0;
  std::string error;  // why it could not be started

  // "exit code 3", "killed by signal 11 (Segmentation fault)", "timed out after 300 s".
  std::string describe() const;
};

// Runs body() in a child; its return value becomes the exit code. Exceptions escaping
// body() are printed and give exit code 70.
ChildOutcome run_in_child(const std::function<int()>& body, double timeout_seconds);

}  // namespace kiln::zoo
