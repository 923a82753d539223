#include "kiln/runner/worker_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace kiln::runner {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

constexpr size_t kStderrTailBytes = 8192;
constexpr auto kPollInterval = 50ms;
constexpr auto kDrainGrace =
    2s;  // after exit, how long leftover holders of the pipes may keep them

// Marks every descriptor from 3 up close-on-exec, so the worker inherits only stdin,
// stdout and stderr (not the server's sockets or other jobs' pipes). Async-signal-safe.
void close_other_descriptors_on_exec() {
#ifdef SYS_close_range
  constexpr unsigned kCloexec = 1u << 2;  // CLOSE_RANGE_CLOEXEC (Linux 5.11)
  if (syscall(SYS_close_range, 3u, ~0u, kCloexec) == 0) return;
#endif
  long max = sysconf(_SC_OPEN_MAX);
  if (max < 0 || max > 65536) max = 65536;
  for (int fd = 3; fd < max; ++fd) fcntl(fd, F_SETFD, FD_CLOEXEC);
}

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

// The child's side of fork(): only async-signal-safe calls until exec.
[[noreturn]] void exec_child(char* const* argv, const char* cwd, int stdin_fd, int stdout_fd,
                             int stderr_fd, int report_fd) {
  setpgid(0, 0);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);  // the server blocks SIGINT/SIGTERM in its threads
  signal(SIGPIPE, SIG_DFL);                  // an ignored SIGPIPE would survive exec
  dup2(stdin_fd, 0);
  dup2(stdout_fd, 1);
  dup2(stderr_fd, 2);
  close_other_descriptors_on_exec();
  int error = 0;
  if (cwd[0] != '\0' && chdir(cwd) != 0) {
    error = errno;
  } else {
    execv(argv[0], argv);
    error = errno;
  }
  ssize_t ignored = write(report_fd, &error, sizeof error);
  (void)ignored;
  _exit(127);
}

struct Pipe {
  int read = -1;
  int write = -1;
  bool open() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return false;
    read = fds[0];
    write = fds[1];
    return true;
  }
  void close_read() {
    if (read >= 0) ::close(read);
    read = -1;
  }
  void close_write() {
    if (write >= 0) ::close(write);
    write = -1;
  }
  ~Pipe() {
    close_read();
    close_write();
  }
};

// Splits stdout into lines and hands them on, until the handler refuses one.
class LineSplitter {
 public:
  LineSplitter(const LineHandler& handler, size_t max_line)
      : handler_(handler), max_line_(max_line) {}

  void feed(const char* data, size_t size) {
    if (rejected_) return;
    buffer_.append(data, size);
    size_t start = 0;
    for (size_t newline; (newline = buffer_.find('\n', start)) != std::string::npos;
         start = newline + 1) {
      if (!deliver(std::string_view(buffer_).substr(start, newline - start))) return;
    }
    buffer_.erase(0, start);
    if (buffer_.size() > max_line_) reject_overlong();  // a line that never ends
  }

  // At end of stream: an unterminated last line is still a line.
  void finish() {
    if (!rejected_ && !buffer_.empty()) deliver(buffer_);
    buffer_.clear();
  }

  bool rejected() const { return rejected_; }
  const std::string& problem() const { return problem_; }

 private:
  bool deliver(std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > max_line_) {
      reject_overlong();
    } else if (!handler_(line)) {
      rejected_ = true;
      buffer_.clear();
    }
    return !rejected_;
  }

  void reject_overlong() {
    rejected_ = true;
    buffer_.clear();
    problem_ = "the worker wrote a stdout line longer than " + std::to_string(max_line_) + " bytes";
  }

  const LineHandler& handler_;
  size_t max_line_;
  std::string buffer_;
  bool rejected_ = false;
  std::string problem_;
};

}  // namespace

std::string signal_name(int signal) {
  switch (signal) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGKILL:
      return "SIGKILL";
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGTRAP:
      return "SIGTRAP";
    case SIGSYS:
      return "SIGSYS";
    case SIGXCPU:
      return "SIGXCPU";
    default:
      return "signal " + std::to_string(signal);
  }
}

WorkerExit run_worker(const WorkerCommand& command, Clock::time_point deadline,
                      const std::atomic<bool>& cancel, const LineHandler& on_line,
                      size_t max_line_bytes) {
  const auto started = Clock::now();
  WorkerExit result;
  auto finish = [&](WorkerExit out) {
    out.elapsed = Clock::now() - started;
    return out;
  };
  if (access(command.executable.c_str(), X_OK) != 0) {
    result.how = WorkerExit::How::kSpawnFailed;
    result.spawn_error =
        "cannot execute " + command.executable.string() + ": " + std::strerror(errno);
    return finish(result);
  }

  std::vector<std::string> storage = {command.executable.string()};
  storage.insert(storage.end(), command.arguments.begin(), command.arguments.end());
  std::vector<char*> argv;
  for (auto& argument : storage) argv.push_back(argument.data());
  argv.push_back(nullptr);
  const std::string cwd = command.working_dir.string();

  Pipe out, err, report;
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (!out.open() || !err.open() || !report.open() || devnull < 0) {
    if (devnull >= 0) close(devnull);
    result.how = WorkerExit::How::kSpawnFailed;
    result.spawn_error = std::string("cannot create pipes for the worker: ") + std::strerror(errno);
    return finish(result);
  }
  const pid_t pid = fork();
  if (pid == 0) exec_child(argv.data(), cwd.c_str(), devnull, out.write, err.write, report.write);
  close(devnull);
  out.close_write();
  err.close_write();
  report.close_write();
  if (pid < 0) {
    result.how = WorkerExit::How::kSpawnFailed;
    result.spawn_error = std::string("fork failed: ") + std::strerror(errno);
    return finish(result);
  }
  setpgid(pid, pid);  // also from this side, so the group exists before any kill below

  int exec_errno = 0;
  ssize_t got;
  do {
    got = read(report.read, &exec_errno, sizeof exec_errno);
  } while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    int status = 0;
    waitpid(pid, &status, 0);
    result.how = WorkerExit::How::kSpawnFailed;
    result.spawn_error = "cannot start " + command.executable.string() + " in " + cwd + ": " +
                         std::strerror(exec_errno);
    return finish(result);
  }

  std::FILE* log =
      command.stderr_log.empty() ? nullptr : std::fopen(command.stderr_log.c_str(), "ae");
  set_nonblocking(out.read);
  set_nonblocking(err.read);
  LineSplitter lines(on_line, max_line_bytes);
  std::string tail;

  enum class Kill { kNone, kTimeout, kCancel, kRejected } killed = Kill::kNone;
  auto kill_group = [&](Kill why) {
    if (killed != Kill::kNone) return;
    killed = why;
    kill(-pid, SIGKILL);
  };
  bool exited = false;
  Clock::time_point exited_at;
  char buffer[65536];

  while (true) {
    if (!exited && killed == Kill::kNone) {
      if (cancel.load())
        kill_group(Kill::kCancel);
      else if (Clock::now() >= deadline)
        kill_group(Kill::kTimeout);
    }
    if (lines.rejected()) kill_group(Kill::kRejected);
    if (!exited) {
      siginfo_t info{};
      if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          info.si_pid == pid) {
        exited = true;
        exited_at = Clock::now();
        // Its zombie still holds the group id: clean up anything it left running (nvcc,
        // a forked helper) before the id can be reused.
        kill(-pid, SIGKILL);
      }
    }
    if (exited && ((out.read < 0 && err.read < 0) || Clock::now() - exited_at > kDrainGrace)) break;

    pollfd fds[2];
    nfds_t count = 0;
    if (out.read >= 0) fds[count++] = {out.read, POLLIN, 0};
    if (err.read >= 0) fds[count++] = {err.read, POLLIN, 0};
    // With both pipes closed only the exit is left to see: look again soon.
    int ready = poll(fds, count, count == 0 ? 5 : static_cast<int>(kPollInterval.count()));
    if (ready <= 0) continue;
    for (nfds_t i = 0; i < count; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      bool is_out = fds[i].fd == out.read;
      ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (n <= 0) {
        if (is_out) {
          lines.finish();
          out.close_read();
        } else {
          err.close_read();
        }
        continue;
      }
      auto size = static_cast<size_t>(n);
      if (is_out) {
        lines.feed(buffer, size);
      } else {
        if (log) std::fwrite(buffer, 1, size, log);
        tail.append(buffer, size);
        if (tail.size() > 2 * kStderrTailBytes) tail.erase(0, tail.size() - kStderrTailBytes);
      }
    }
  }
  if (out.read >= 0) lines.finish();
  if (lines.rejected()) kill_group(Kill::kRejected);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (log) std::fclose(log);
  if (tail.size() > kStderrTailBytes) tail.erase(0, tail.size() - kStderrTailBytes);
  result.stderr_tail = std::move(tail);
  result.output_problem = lines.problem();

  switch (killed) {
    case Kill::kTimeout:
      result.how = WorkerExit::How::kTimedOut;
      break;
    case Kill::kCancel:
      result.how = WorkerExit::How::kCancelled;
      break;
    case Kill::kRejected:
      result.how = WorkerExit::How::kOutputRejected;
      break;
    case Kill::kNone:
      if (WIFSIGNALED(status)) {
        result.how = WorkerExit::How::kSignaled;
        result.signal = WTERMSIG(status);
      } else {
        result.how = WorkerExit::How::kExited;
        result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      break;
  }
  return finish(result);
}

}  // namespace kiln::runner
