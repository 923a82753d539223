// Test support for kiln_confine: a forked child confines itself, runs one probe and exits with
// what the probe returned (0 for success, an errno for a refused call), so the parent can assert
// on the outcome while staying unconfined itself.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <string>

#include "kiln/base/confine.h"
#include "support/temp_dir.h"

namespace kiln::testing {

// The child's exit code when confine_this_process failed (it prints the error on stderr).
constexpr int kConfineFailed = 200;

// What a child run ended with.
struct ChildOutcome {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;      // the signal that killed it, else 0
};

// Forks; the child confines itself with `policy`, then exits with `probe(report)`. Nothing of
// the child (gtest's state, atexit handlers) runs past the probe: it leaves through _exit.
ChildOutcome run_confined(const ConfinePolicy& policy,
                          const std::function<int(const ConfineReport&)>& probe);

// The same, unconfined: the control that shows a probe succeeds without confinement.
ChildOutcome run_unconfined(const std::function<int()>& probe);

// The policy most tests use: what a CUDA process keeps (for_cuda_process).
ConfinePolicy cuda_policy();

// errno of the last call when `failed`, else 0: a probe's return value.
int errno_if(bool failed);

// Writes `text` and a newline to dir/relative (its folders created); the file's path.
std::filesystem::path write_in(const TempDir& dir, const std::string& relative,
                               const std::string& text);

// The first line of a file, or "" when it cannot be read.
std::string read_first_line(const std::filesystem::path& file);

}  // namespace kiln::testing
