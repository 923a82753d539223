// Runs a program to completion under kiln's process supervisor, for tests that drive binaries
// from the outside (kiln setup, kiln report, a headless browser): its exit code and everything
// it wrote.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/base/process.h"

namespace kiln::testing {

struct Ran {
  int code = -1;  // -1 when it did not exit by itself (killed at the deadline, or a signal)
  std::string out;
  std::string err;
};

struct RunOptions {
  std::filesystem::path cwd;               // empty: this process's
  std::map<std::string, std::string> env;  // added to (or replacing) the environment
  std::chrono::seconds timeout{60};
};

inline Ran run_program(std::vector<std::string> argv, const RunOptions& options = {}) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.working_dir = options.cwd;
  spec.search_path = true;
  spec.extra_env = options.env;
  ProcessLimits limits;
  limits.deadline = std::chrono::steady_clock::now() + options.timeout;
  Ran ran;
  ProcessOutput output;
  output.on_stdout = [&ran](std::string_view chunk) {
    ran.out.append(chunk);
    return true;
  };
  output.on_stderr = [&ran](std::string_view chunk) { ran.err.append(chunk); };
  const ProcessExit exit = run_supervised(spec, limits, output);
  ran.code = exit.how == ProcessExit::How::kExited ? exit.exit_code : -1;
  return ran;
}

}  // namespace kiln::testing
