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
    storage.insert(storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& arg : storage) argv.push_back(arg.data());
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(err[1], 2);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(err[1]);
    err_ = err[0];
  }
  ~KilnProcess() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    close(err_);
  }

  // Reads stderr until `pattern` matches (returns the match's first group) or timeout.
  std::string wait_for(const std::regex& pattern, std::chrono::milliseconds timeout = 20s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    std::smatch match;
    while (std::chrono::steady_clock::now() < deadline) {
      if (std::regex_search(stderr_, match, pattern))
        return match.size() > 1 ? match[1].str() : match[0].str();
      pollfd fd{err_, POLLIN, 0};
      if (poll(&fd, 1, 100) > 0) {
        char buffer[4096];
        ssize_t n = read(err_, buffer, sizeof buffer);
        if (n <= 0) break;
        stderr_.append(buffer, static_cast<size_t>(n));
      }
    }
    return std::regex_search(stderr_, match, pattern) ? match[0].str() : "";
  }

  int wait_exit(std::chrono::milliseconds timeout = 20s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        read_stderr(1s);  // to EOF
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      read_stderr(50ms);
    }
    return -1;
  }

  // Appends what stderr holds, until EOF or `timeout`.
  void read_stderr(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd fd{err_, POLLIN, 0};
      if (poll(&fd, 1, 20) <= 0) continue;
      char buffer[4096];
      ssize_t n = read(err_, buffer, sizeof buffer);
      if (n <= 0) return;
      stderr_.append(buffer, static_cast<size_t>(n));
    }
  }

  pid_t pid() const { return pid_; }
  const std::string& err() const { return stderr_; }

 private:
  pid_t pid_ = -1;
  int err_ = -1;
  bool exited_ = false;
  std::string stderr_;
};

}  // namespace kiln::runner::testing
