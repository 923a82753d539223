#include "restrict_all_threads.h"

#include <dirent.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <thread>

namespace kiln::confine_detail {
namespace {

constexpr int kSignal = SIGURG;
constexpr int kSlots = 4096;
constexpr int kRounds = 8;
constexpr std::chrono::seconds kAnswerTimeout{2};

// What the handler reads and writes. A signal handler has no way to receive its context but a
// global; restrict_other_threads runs once at a time (the caller serializes), and every member
// is a lock-free atomic, so the handler is async-signal-safe.
struct Broadcast {
  std::atomic<int> ruleset_fd{-1};
  std::atomic<int> next_slot{0};
  std::array<std::atomic<pid_t>, kSlots> tid{};
  std::array<std::atomic<int>, kSlots> error{};
};
Broadcast g_broadcast;  // NOLINT: see above

void on_broadcast_signal(int /*signal*/) {
  int saved_errno = errno;
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);  // seccomp's TSYNC set it already; cheap to be sure
  int fd = g_broadcast.ruleset_fd.load();
  int error = 0;
  if (fd < 0) {
    error = EBADF;
  } else if (syscall(SYS_landlock_restrict_self, fd, 0U) != 0) {
    error = errno;
  }
  int slot = g_broadcast.next_slot.fetch_add(1);
  if (slot < kSlots) {
    g_broadcast.error[slot].store(error, std::memory_order_relaxed);
    g_broadcast.tid[slot].store(gettid(), std::memory_order_release);
  }
  errno = saved_errno;
}

std::set<pid_t> list_threads() {
  std::set<pid_t> tids;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return tids;
  while (dirent* entry = readdir(dir)) {
    char* end = nullptr;
    long tid = std::strtol(entry->d_name, &end, 10);
    if (end != entry->d_name && *end == '\0' && tid > 0) tids.insert(static_cast<pid_t>(tid));
  }
  closedir(dir);
  return tids;
}

std::string task_file(pid_t tid, const char* name) {
  return "/proc/self/task/" + std::to_string(tid) + "/" + name;
}

bool thread_exists(pid_t tid) { return access(task_file(tid, "status").c_str(), F_OK) == 0; }

std::string thread_name(pid_t tid) {
  std::ifstream comm(task_file(tid, "comm"));
  std::string name;
  std::getline(comm, name);
  return "thread " + std::to_string(tid) + " (" + (name.empty() ? "?" : name) + ")";
}

// From the thread's SigBlk line; false when it cannot be read (the signal is then sent anyway).
bool blocks_signal(pid_t tid, int signal) {
  std::ifstream status(task_file(tid, "status"));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("SigBlk:", 0) != 0) continue;
    unsigned long long mask = std::strtoull(line.c_str() + 7, nullptr, 16);
    return (mask >> (signal - 1)) & 1ULL;
  }
  return false;
}

// The answers so far: thread id -> 0 or the errno of its landlock_restrict_self.
void collect_answers(std::map<pid_t, int>& answers) {
  int filled = std::min(g_broadcast.next_slot.load(), kSlots);
  for (int slot = 0; slot < filled; ++slot) {
    pid_t tid = g_broadcast.tid[slot].load(std::memory_order_acquire);
    if (tid != 0) answers.emplace(tid, g_broadcast.error[slot].load(std::memory_order_relaxed));
  }
}

}  // namespace

ThreadsRestricted restrict_other_threads(int ruleset_fd) {
  ThreadsRestricted result;
  const pid_t self = gettid();
  const pid_t process = getpid();

  g_broadcast.next_slot.store(0);
  for (auto& tid : g_broadcast.tid) tid.store(0);
  g_broadcast.ruleset_fd.store(ruleset_fd);
  struct sigaction action {};
  action.sa_handler = on_broadcast_signal;
  action.sa_flags = SA_RESTART;
  sigfillset(&action.sa_mask);
  struct sigaction previous {};
  sigaction(kSignal, &action, &previous);

  std::map<pid_t, int> answers;
  std::set<pid_t> left_out;
  int round = 0;
  for (; round < kRounds; ++round) {
    std::set<pid_t> sent;
    for (pid_t tid : list_threads()) {
      if (tid == self || answers.count(tid) != 0 || left_out.count(tid) != 0) continue;
      // Sent even to a thread that blocks it now: a thread glibc is starting blocks every signal
      // for a moment, and takes the pending one once it unblocks.
      if (syscall(SYS_tgkill, process, tid, kSignal) == 0) sent.insert(tid);  // else it ended
    }
    if (sent.empty()) break;
    auto deadline = std::chrono::steady_clock::now() + kAnswerTimeout;
    for (;;) {
      collect_answers(answers);
      bool all = true;
      for (pid_t tid : sent) all = all && answers.count(tid) != 0;
      if (all || std::chrono::steady_clock::now() > deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    for (pid_t tid : sent) {
      if (answers.count(tid) != 0 || !thread_exists(tid)) continue;
      left_out.insert(tid);
      result.unreached.push_back(
          thread_name(tid) +
          (blocks_signal(tid, kSignal) ? " blocks SIGURG" : " did not answer SIGURG in 2 s") +
          ": Landlock does not restrict it (its file access is not confined)");
    }
  }
  if (round == kRounds) {
    for (pid_t tid : list_threads()) {
      if (tid != self && answers.count(tid) == 0 && left_out.count(tid) == 0) {
        result.unreached.push_back(thread_name(tid) + " started while the others were being " +
                                   "restricted and was not reached");
      }
    }
  }
  // The handler goes before the descriptor: a late signal meets the old disposition, never a
  // closed ruleset. When that is SIGURG's default (ignore), restoring it also discards the
  // signal still pending on a thread that blocks it.
  sigaction(kSignal, &previous, nullptr);
  g_broadcast.ruleset_fd.store(-1);

  for (const auto& [tid, error] : answers) {
    if (error == 0) {
      ++result.restricted;
    } else {
      result.unreached.push_back(thread_name(tid) +
                                 ": landlock_restrict_self failed: " + std::strerror(error));
    }
  }
  return result;
}

}  // namespace kiln::confine_detail
