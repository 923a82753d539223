#include "kiln/compiler/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

extern char** environ;

namespace kiln::compiler {

std::string ProcessResult::describe() const {
  if (!started) return "could not start: " + error;
  if (timed_out) return "timed out after " + std::to_string(static_cast<int>(seconds)) + " s";
  if (signal != 0)
    return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exit code " + std::to_string(exit_code);
}

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
  ProcessResult result;
  if (argv.empty()) {
    result.error = "empty command";
    return result;
  }
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    result.error = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  // Environment and argv are prepared before fork: only async-signal-safe calls after it.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string key = entry.substr(0, entry.find('='));
    if (options.extra_env.count(key) == 0) env_strings.push_back(entry);
  }
  for (const auto& [key, value] : options.extra_env) env_strings.push_back(key + "=" + value);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> c_args;
  for (auto& a : args) c_args.push_back(a.data());
  c_args.push_back(nullptr);
  int stdout_fd = -1;
  if (!options.stdout_file.empty()) {
    stdout_fd = ::open(options.stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (stdout_fd < 0) {
      result.error = "cannot write " + options.stdout_file + ": " + std::strerror(errno);
      ::close(pipe_fds[0]);
      ::close(pipe_fds[1]);
      return result;
    }
  }

  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    result.error = std::string("fork: ") + std::strerror(errno);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    if (stdout_fd >= 0) ::close(stdout_fd);
    return result;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(stdout_fd >= 0 ? stdout_fd : pipe_fds[1], STDOUT_FILENO);
    ::dup2(pipe_fds[1], STDERR_FILENO);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    if (!options.working_dir.empty() && ::chdir(options.working_dir.c_str()) != 0) {
      const char message[] = "cannot enter the working directory\n";
      (void)!::write(STDERR_FILENO, message, sizeof message - 1);
      ::_exit(127);
    }
    ::execve(c_args[0], c_args.data(), envp.data());
    ::execvpe(c_args[0], c_args.data(), envp.data());
    const char message[] = "exec failed\n";
    (void)!::write(STDERR_FILENO, message, sizeof message - 1);
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  ::close(pipe_fds[1]);
  if (stdout_fd >= 0) ::close(stdout_fd);
  result.started = true;

  char buffer[65536];
  bool open = true;
  int status = 0;
  bool reaped = false;
  while (true) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed > options.timeout_seconds) {
      ::kill(-pid, SIGKILL);
      result.timed_out = true;
      break;
    }
    if (open) {
      pollfd fd{pipe_fds[0], POLLIN, 0};
      const int ready = ::poll(&fd, 1, 100);
      if (ready > 0) {
        const ssize_t n = ::read(pipe_fds[0], buffer, sizeof buffer);
        if (n > 0) {
          result.output.append(buffer, static_cast<size_t>(n));
          if (result.output.size() > options.max_output) {
            result.output.erase(0, result.output.size() - options.max_output);
          }
        } else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
          open = false;
        }
        continue;
      }
    } else {
      ::usleep(10000);
    }
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      reaped = true;
      if (!open) break;
      // Drain what is left; children of the child may still hold the pipe open.
      pollfd fd{pipe_fds[0], POLLIN, 0};
      while (::poll(&fd, 1, 50) > 0) {
        const ssize_t n = ::read(pipe_fds[0], buffer, sizeof buffer);
        if (n <= 0) break;
        result.output.append(buffer, static_cast<size_t>(n));
      }
      break;
    }
  }
  ::close(pipe_fds[0]);
  if (!reaped) {
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (result.timed_out) return result;
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

}  // namespace kiln::compiler
