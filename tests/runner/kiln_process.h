// `kiln ARGS...` as a child process with its stderr on a pipe, for the tests that drive the
// binary from the outside (runner_command_test, slurm_cluster_test).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln::runner::testing {

using namespace std::chrono_literals;

// `kiln ARGS...` with stderr on a pipe.
class KilnProcess {
 public:
  explicit KilnProcess(const std::vector<std::string>& args) {
    int err[2];
    if (pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    std::vector<std::string> storage = {KILN_BIN};

  }  // namespace kiln::runner::testing
