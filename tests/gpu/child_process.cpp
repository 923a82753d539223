#include "child_process.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <thread>

namespace kiln::zoo {

std::string ChildOutcome::describe() const {
  if (!started) return "could not start a child process: " + error;
  if (timed_out)
    return "timed out after " + std::to_string(static_cast<int>(seconds)) + " s and was killed";
  if (exited) return "exit code " + std::to_string(exit_code);
  return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
}

ChildOutcome run_in_child(const std::function<int()>& body, double timeout_seconds) {
  ChildOutcome outcome;
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);  // nothing buffered may be written twice
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    outcome.error = std::strerror(errno);
    return outcome;
  }
  if (pid == 0) {
    int code = 70;
    try {
      code = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "uncaught exception in the child: %s\n", e.what());
    } catch (...) {
      std::fprintf(stderr, "uncaught non-standard exception in the child\n");
    }
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    ::_exit(code);  // no atexit handlers: they belong to the parent's test framework
  }
  outcome.started = true;
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    outcome.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {
      outcome.error = std::string("waitpid: ") + std::strerror(errno);
      return outcome;
    }
    if (outcome.seconds > timeout_seconds) {
      ::kill(pid, SIGKILL);  // the child we forked, by its id
      ::waitpid(pid, &status, 0);
      outcome.timed_out = true;
      return outcome;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (WIFEXITED(status)) {
    outcome.exited = true;
    outcome.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    outcome.signal = WTERMSIG(status);
  }
  return outcome;
}

}  // namespace kiln::zoo
