#include "kiln/base/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <utility>

extern char** environ;

namespace kiln {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

constexpr auto kPollInterval = 50ms;  // how often cancel and the deadline are looked at
constexpr auto kDrainGrace = 2s;  // after the exit, how long others holding its pipes may keep them

// A descriptor owned here, closed when it goes.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// Moves a descriptor above 0, 1 and 2 (still close-on-exec). A parent started with one of
// those closed hands its number to a pipe, and the child's dup2(fd, fd) would then keep
// close-on-exec set and leave the child without that stream.
int above_standard(int fd) {
  if (fd < 0 || fd > 2) return fd;
  const int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  const int saved = errno;
  ::close(fd);
  errno = saved;
  return moved;
}

bool open_pipe(Fd& read_end, Fd& write_end) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  read_end.reset(above_standard(fds[0]));
  write_end.reset(above_standard(fds[1]));
  return read_end.valid() && write_end.valid();
}

// A descriptor that becomes readable when the child exits (Linux 5.3), so an exit is seen
// at once even with no pipe left to watch; -1 where the kernel has none.
int open_exit_watch(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

// What the child tells the parent through the report pipe when it cannot exec.
struct ChildReport {
  enum Stage : int { kChdir = 1, kExec = 2 };
  int stage = kExec;
  int error = 0;
};

// Everything the child needs, built before fork: after it, the child may only make
// async-signal-safe calls (no allocation), because another thread may hold malloc's lock.
struct ChildPlan {
  std::vector<std::string> argv_storage;
  std::vector<char*> argv;
  std::vector<std::string> env_storage;
  std::vector<char*> envp;
  char** env = environ;
  std::vector<std::string> programs;  // the paths to try, in order
  std::string cwd;
  int stdin_fd = -1, stdout_fd = -1, stderr_fd = -1, report_fd = -1;
};

std::string path_variable(const ProcessSpec& spec) {
  if (auto it = spec.extra_env.find("PATH"); it != spec.extra_env.end()) return it->second;
  const char* path = std::getenv("PATH");
  return path != nullptr ? path : "/bin:/usr/bin";  // glibc's default when PATH is unset
}

// The places execvp would look, searched by the child itself so that no library call
// that may allocate runs after fork.
std::vector<std::string> programs_to_try(const ProcessSpec& spec) {
  const std::string& name = spec.argv[0];
  if (!spec.search_path || name.empty() || name.find('/') != std::string::npos) return {name};
  std::vector<std::string> programs;
  const std::string path = path_variable(spec);
  for (size_t start = 0;;) {
    const size_t colon = path.find(':', start);
    const std::string dir = path.substr(start, colon - start);
    programs.push_back((dir.empty() ? "." : dir) + "/" + name);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return programs;
}

void prepare_plan(const ProcessSpec& spec, ChildPlan& plan) {
  plan.argv_storage = spec.argv;
  for (auto& argument : plan.argv_storage) plan.argv.push_back(argument.data());
  plan.argv.push_back(nullptr);
  if (!spec.extra_env.empty()) {
    for (char** entry = environ; *entry != nullptr; ++entry) {
      const std::string_view text = *entry;
      if (spec.extra_env.count(std::string(text.substr(0, text.find('=')))) == 0)
        plan.env_storage.emplace_back(text);
    }
    for (const auto& [key, value] : spec.extra_env) plan.env_storage.push_back(key + "=" + value);
    for (auto& entry : plan.env_storage) plan.envp.push_back(entry.data());
    plan.envp.push_back(nullptr);
    plan.env = plan.envp.data();
  }
  plan.programs = programs_to_try(spec);
  plan.cwd = spec.working_dir.string();
}

// Marks every descriptor from 3 up close-on-exec, so the child inherits only stdin, stdout
// and stderr (not the server's sockets or other children's pipes). Async-signal-safe.
void close_other_descriptors_on_exec() {
#ifdef SYS_close_range
  constexpr unsigned kCloexec = 1u << 2;  // CLOSE_RANGE_CLOEXEC (Linux 5.11)
  if (syscall(SYS_close_range, 3u, ~0u, kCloexec) == 0) return;
#endif
  long max = sysconf(_SC_OPEN_MAX);
  if (max < 0 || max > 65536) max = 65536;
  for (int fd = 3; fd < max; ++fd) fcntl(fd, F_SETFD, FD_CLOEXEC);
}

// Handlers of this process would run in the child until exec (signals stay blocked from
// before fork until here); ignored SIGPIPE would even survive exec. Async-signal-safe.
void reset_signals() {
  struct sigaction fallback {};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction current {};
    if (sigaction(sig, nullptr, &current) != 0) continue;
    if (current.sa_handler != SIG_DFL && (current.sa_handler != SIG_IGN || sig == SIGPIPE))
      sigaction(sig, &fallback, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);  // the server blocks SIGINT/SIGTERM in its threads
}

// The errno of exec across the programs tried, as execvp picks it: a program found but not
// runnable (EACCES) counts over one not found; any other failure stops the search.
int exec_programs(const ChildPlan& plan) {
  int error = 0;
  for (const std::string& program : plan.programs) {
    execve(program.c_str(), plan.argv.data(), plan.env);
    const int failed = errno;
    if (failed == EACCES) {
      error = failed;
    } else if (failed == ENOENT || failed == ENOTDIR) {
      if (error == 0) error = failed;
    } else {
      return failed;
    }
  }
  return error != 0 ? error : ENOENT;
}

// The child's side of fork(): only async-signal-safe calls until exec.
[[noreturn]] void exec_child(const ChildPlan& plan) {
  setpgid(0, 0);
  dup2(plan.stdin_fd, STDIN_FILENO);
  dup2(plan.stdout_fd, STDOUT_FILENO);
  dup2(plan.stderr_fd, STDERR_FILENO);
  close_other_descriptors_on_exec();
  reset_signals();
  ChildReport report;
  if (!plan.cwd.empty() && chdir(plan.cwd.c_str()) != 0) {
    report = {ChildReport::kChdir, errno};
  } else {
    report = {ChildReport::kExec, exec_programs(plan)};
  }
  while (write(plan.report_fd, &report, sizeof report) < 0 && errno == EINTR) {
  }
  _exit(127);
}

void reap(pid_t pid, int& status, bool& known) {
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      known = false;  // reaped elsewhere (SIGCHLD ignored): the status is lost
      return;
    }
  }
  known = true;
}

// The parent's side once the child runs: pipes read, limits watched, the group killed.
class Supervision {
 public:
  Supervision(pid_t pid, const ProcessLimits& limits, const ProcessOutput& output, int out, int err)
      : pid_(pid), limits_(limits), output_(output), out_(out), err_(err) {
    for (int fd : {out_.get(), err_.get()})
      if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    exit_watch_.reset(open_exit_watch(pid));
  }
  Supervision(const Supervision&) = delete;
  Supervision& operator=(const Supervision&) = delete;
  ~Supervision() {  // only before reap(): a callback threw; leave nothing running
    if (reaped_) return;
    if (!group_lost_) ::kill(-pid_, SIGKILL);
    reap(pid_, status_, status_known_);
  }

  ProcessExit run() {
    while (true) {
      check_limits();
      check_exit();
      if (exited_ && ((!out_.valid() && !err_.valid()) || Clock::now() - exited_at_ > kDrainGrace))
        break;
      wait_and_read();
    }
    if (out_.valid()) end_stdout();  // the grace ran out with its stdout still held open
    reap(pid_, status_, status_known_);
    reaped_ = true;
    return result();
  }

 private:
  using How = ProcessExit::How;

  void kill_group(How why) {
    if (killed_) return;
    killed_ = why;
    if (!group_lost_) ::kill(-pid_, SIGKILL);
  }

  void check_limits() {
    if (exited_ || killed_) return;
    if (limits_.cancel != nullptr && limits_.cancel->load())
      kill_group(How::kCancelled);
    else if (Clock::now() >= limits_.deadline)
      kill_group(How::kTimedOut);
  }

  void check_exit() {
    if (exited_) return;
    siginfo_t info{};
    const int got = waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
    const bool zombie = got == 0 && info.si_pid == pid_;
    if (!zombie && !(got < 0 && errno == ECHILD)) return;  // ECHILD: reaped elsewhere
    exited_ = true;
    exited_at_ = Clock::now();
    exit_watch_.reset();
    // Its zombie still holds the group id: kill what it left running (nvcc's cicc, a
    // forked helper) before the id can be reused. Without a zombie the id may be reused.
    group_lost_ = !zombie;
    if (zombie) ::kill(-pid_, SIGKILL);
  }

  int poll_timeout_ms() const {
    if (!out_.valid() && !err_.valid() && !exit_watch_.valid()) return 5;  // only the exit to see
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(kPollInterval);
    if (!exited_ && !killed_ && limits_.deadline != Clock::time_point::max())
      wait = std::min(wait, std::chrono::ceil<std::chrono::milliseconds>(
                                std::max(limits_.deadline - Clock::now(), Clock::duration(0))));
    return static_cast<int>(wait.count());
  }

  void wait_and_read() {
    pollfd fds[3];
    nfds_t count = 0;
    if (out_.valid()) fds[count++] = {out_.get(), POLLIN, 0};
    if (err_.valid()) fds[count++] = {err_.get(), POLLIN, 0};
    if (exit_watch_.valid()) fds[count++] = {exit_watch_.get(), POLLIN, 0};
    if (poll(fds, count, poll_timeout_ms()) <= 0) return;  // EINTR too: look again
    for (nfds_t i = 0; i < count; ++i) {
      if (fds[i].fd == exit_watch_.get() || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      read_from(fds[i].fd == out_.get());
    }
  }

  void read_from(bool is_out) {
    char buffer[65536];
    const ssize_t n = ::read(is_out ? out_.get() : err_.get(), buffer, sizeof buffer);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n <= 0) {
      if (is_out)
        end_stdout();
      else
        err_.reset();
      return;
    }
    const std::string_view chunk(buffer, static_cast<size_t>(n));
    if (is_out)
      deliver_stdout(chunk);
    else if (output_.on_stderr)
      output_.on_stderr(chunk);
  }

  void deliver_stdout(std::string_view chunk) {
    if (refused_ || !output_.on_stdout) return;
    if (!output_.on_stdout(chunk)) {
      refused_ = true;
      kill_group(How::kRefused);
    }
  }

  void end_stdout() {
    out_.reset();
    deliver_stdout({});
  }

  ProcessExit result() const {
    ProcessExit exit;
    if (killed_) {
      exit.how = *killed_;
    } else if (status_known_ && WIFSIGNALED(status_)) {
      exit.how = How::kSignaled;
      exit.signal = WTERMSIG(status_);
    } else {
      exit.how = How::kExited;
      exit.exit_code = status_known_ && WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
    }
    return exit;
  }

  const pid_t pid_;
  const ProcessLimits& limits_;
  const ProcessOutput& output_;
  Fd out_, err_, exit_watch_;
  std::optional<How> killed_;
  bool refused_ = false;
  bool exited_ = false;
  bool group_lost_ = false;  // reaped elsewhere: its group id is no longer ours to kill
  Clock::time_point exited_at_;
  bool reaped_ = false;
  int status_ = 0;
  bool status_known_ = false;
};

ProcessExit spawn_failure(int error, std::string what) {
  ProcessExit exit;
  exit.how = ProcessExit::How::kSpawnFailed;
  exit.spawn_errno = error;
  exit.spawn_error = std::move(what) + ": " + std::strerror(error);
  return exit;
}

std::string describe_report(const ProcessSpec& spec, const ChildReport& report) {
  const std::string& program = spec.argv[0];
  if (report.stage == ChildReport::kChdir)
    return "cannot enter the working directory " + spec.working_dir.string() + " to start " +
           program;
  const bool searched = spec.search_path && program.find('/') == std::string::npos;
  return "cannot start " + program + (searched ? " (looked up in PATH)" : "");
}

// Forks and execs; on success the pid, with the child's ends of the pipes closed here.
ProcessExit spawn(const ProcessSpec& spec, ChildPlan& plan, Fd& out_read, Fd& err_read,
                  pid_t& pid) {
  Fd devnull(above_standard(open("/dev/null", O_RDONLY | O_CLOEXEC)));
  if (!devnull.valid()) return spawn_failure(errno, "cannot open /dev/null as stdin");
  Fd out_write, err_write, report_read, report_write;
  if (!spec.stdout_file.empty()) {
    out_write.reset(above_standard(
        open(spec.stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)));
    if (!out_write.valid())
      return spawn_failure(errno, "cannot write " + spec.stdout_file.string() +
                                      " for the stdout of " + spec.argv[0]);
  } else if (!open_pipe(out_read, out_write)) {
    return spawn_failure(errno, "cannot make a pipe for the stdout of " + spec.argv[0]);
  }
  if (!spec.merge_stderr && !open_pipe(err_read, err_write))
    return spawn_failure(errno, "cannot make a pipe for the stderr of " + spec.argv[0]);
  if (!open_pipe(report_read, report_write))
    return spawn_failure(errno, "cannot make a pipe to start " + spec.argv[0]);
  plan.stdin_fd = devnull.get();
  plan.stdout_fd = out_write.get();
  plan.stderr_fd = spec.merge_stderr ? out_write.get() : err_write.get();
  plan.report_fd = report_write.get();

  // Signals stay blocked from here until the child has reset its handlers.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  pid = fork();
  if (pid == 0) exec_child(plan);
  const int fork_error = errno;
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (pid < 0) return spawn_failure(fork_error, "cannot fork to start " + spec.argv[0]);
  setpgid(pid, pid);  // also from this side, so the group exists before any kill
  report_write.reset();
  out_write.reset();
  err_write.reset();

  ChildReport report;
  ssize_t got;
  while ((got = read(report_read.get(), &report, sizeof report)) < 0 && errno == EINTR) {
  }
  if (got != static_cast<ssize_t>(sizeof report)) return {};  // closed by exec: it runs
  int status = 0;
  bool known = false;
  reap(pid, status, known);
  pid = -1;
  return spawn_failure(report.error, describe_report(spec, report));
}

}  // namespace

ProcessExit run_supervised(const ProcessSpec& spec, const ProcessLimits& limits,
                           const ProcessOutput& output) {
  const auto started = Clock::now();
  ProcessExit exit;
  if (spec.argv.empty()) {
    exit = spawn_failure(EINVAL, "nothing to run: the command line is empty");
  } else {
    ChildPlan plan;
    prepare_plan(spec, plan);
    Fd out_read, err_read;
    pid_t pid = -1;
    exit = spawn(spec, plan, out_read, err_read, pid);
    if (pid > 0) {
      Supervision supervision(pid, limits, output, out_read.release(), err_read.release());
      exit = supervision.run();
    }
  }
  exit.elapsed = Clock::now() - started;
  return exit;
}

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

}  // namespace kiln
