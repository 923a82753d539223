#include "kiln/replay/stdio_connection.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "kiln/base/json_text.h"
#include "kiln/base/text.h"

extern char** environ;

namespace kiln::replay {

using namespace std::chrono_literals;

namespace {

constexpr size_t kMaxLineBytes = 64u << 20;  // far above kiln's own 4 MiB message limit

// A pipe whose ends are above 0, 1 and 2 and close on exec (the child gets its copies through
// dup2, which clears the flag).
bool open_pipe(int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  for (int i = 0; i < 2; ++i) {
    if (fds[i] > 2) continue;
    const int moved = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
    ::close(fds[i]);
    fds[i] = moved;
  }
  return fds[0] >= 0 && fds[1] >= 0;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "stopped";
}

}  // namespace

Result<std::unique_ptr<StdioConnection>> StdioConnection::start(
    const std::vector<std::string>& argv) {
  if (argv.empty()) return make_error("no server command to replay against; pass --against");
  std::unique_ptr<StdioConnection> self(new StdioConnection());
  self->program_ = argv[0];
  int in[2], out[2], err[2];
  if (!open_pipe(in) || !open_pipe(out) || !open_pipe(err))
    return make_error(std::string("cannot make pipes for the server: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setpgroup(&attributes, 0);  // its own group, killed whole if it lingers
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int spawned =
      posix_spawnp(&self->pid_, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  if (spawned != 0) {
    ::close(in[1]);
    ::close(out[0]);
    ::close(err[0]);
    self->pid_ = -1;
    return make_error("cannot start " + argv[0] + ": " + std::strerror(spawned) +
                      "; check the --against command");
  }
  self->stdin_fd_ = in[1];
  StdioConnection* raw = self.get();
  self->stdout_reader_ = std::thread([raw, fd = out[0]] { raw->read_stdout(fd); });
  self->stderr_reader_ = std::thread([raw, fd = err[0]] { raw->read_stderr(fd); });
  return self;
}

StdioConnection::~StdioConnection() { finish(); }

Status StdioConnection::send(const nlohmann::json& message) {
  return write_line(json_text(message) + "\n");
}

Status StdioConnection::send_raw(const std::string& text) { return write_line(text + "\n"); }

// A server that died closes the pipe: the write fails with EPIPE, and SIGPIPE, blocked in this
// thread for the write, is taken back before anyone sees it.
Status StdioConnection::write_line(std::string text) {
  if (stdin_fd_ < 0) return make_error("the server's stdin is closed");
  sigset_t pipe_only, old;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
  size_t done = 0;
  int failure = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(stdin_fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      failure = errno;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (failure == EPIPE) {
    const timespec zero{0, 0};
    sigtimedwait(&pipe_only, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (failure != 0)
    return make_error(std::string("cannot write to the server: ") + std::strerror(failure));
  return Ok{};
}

void StdioConnection::read_stdout(int fd) {
  LineSplitter lines(
      [this](std::string_view line) {
        if (trim(line).empty()) return true;
        auto parsed = parse_json_bounded(line);
        inbox_.push(parsed ? std::move(*parsed) : nlohmann::json(std::string(line)));
        return true;
      },
      kMaxLineBytes);
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (!lines.feed(std::string_view(buffer, static_cast<size_t>(n)))) break;
  }
  lines.feed({});
  ::close(fd);
  inbox_.close("the server closed its stdout");
}

void StdioConnection::read_stderr(int fd) {
  char buffer[8192];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    std::lock_guard lock(mutex_);
    stderr_tail_.append(std::string_view(buffer, static_cast<size_t>(n)));
  }
  ::close(fd);
}

std::optional<nlohmann::json> StdioConnection::receive(Clock::time_point deadline) {
  return inbox_.pop(deadline);
}

std::string StdioConnection::reap(bool wait) {
  std::lock_guard lock(mutex_);
  if (exit_.empty() && pid_ > 0) {
    int status = 0;
    pid_t got;
    do got = waitpid(pid_, &status, wait ? 0 : WNOHANG);
    while (got < 0 && errno == EINTR);
    if (got == pid_) exit_ = describe_status(status);
  }
  return exit_;
}

std::string StdioConnection::closed() {
  std::string why = inbox_.closed();
  if (why.empty()) return "";
  // The exit follows the closed stdout closely; give it a moment to be seen.
  std::string how;
  for (int i = 0; i < 20 && (how = reap(false)).empty(); ++i) std::this_thread::sleep_for(10ms);
  std::string tail;
  {
    std::lock_guard lock(mutex_);
    tail = std::string(trim(stderr_tail_.text()));
  }
  if (!how.empty()) why = program_ + " " + how;
  if (!tail.empty()) why += "; its stderr ends:\n" + tail;
  return why;
}

void StdioConnection::finish() {
  close_fd(stdin_fd_);  // a stdio server ends at EOF
  if (pid_ > 0) {
    const auto deadline = Clock::now() + 10s;
    while (reap(false).empty() && Clock::now() < deadline) std::this_thread::sleep_for(20ms);
    if (reap(false).empty()) {
      ::kill(-pid_, SIGTERM);
      std::this_thread::sleep_for(500ms);
      if (reap(false).empty()) ::kill(-pid_, SIGKILL);
      reap(true);
    }
    // Whatever it started and left behind in its group goes with it.
    ::kill(-pid_, SIGKILL);
    pid_ = -1;
  }
  if (stdout_reader_.joinable()) stdout_reader_.join();
  if (stderr_reader_.joinable()) stderr_reader_.join();
}

}  // namespace kiln::replay
