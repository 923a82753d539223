// Landlock on every thread (base/confine/src/restrict_all_threads.cpp): threads that exist before
// confinement, as CUDA's do, end up restricted too, or are named in the report.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

#include "confined_child.h"

namespace kiln::testing {
namespace {

using namespace std::chrono_literals;

int read_errno(const std::filesystem::path& file) {
  int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  close(fd);
  return 0;
}

bool has_note(const ConfineReport& report, const std::string& part) {
  for (const std::string& note : report.notes) {
    if (note.find(part) != std::string::npos) return true;
  }
  return false;
}

class RestrictAllThreads : public ::testing::Test {
 protected:
  void SetUp() override {
    if (landlock_abi_version() == 0) {
      GTEST_SKIP() << "Landlock is unavailable on this kernel: there is no domain to spread";
    }
    seed_ = write_in(dir_, "hidden/seed", "12345");
  }

  TempDir dir_;
  std::filesystem::path seed_;
};

// A thread started before confinement waits, then tries the seed once the process is confined.
TEST_F(RestrictAllThreads, RestrictsAThreadStartedBeforeConfinement) {
  auto outcome = run_unconfined([this] {
    std::atomic<bool> go{false};
    std::atomic<int> seen{-1};
    std::thread earlier([&] {
      while (!go) std::this_thread::sleep_for(1ms);
      seen = read_errno(seed_);
    });
    auto report = confine_this_process(cuda_policy());
    go = true;
    earlier.join();
    if (!report) return kConfineFailed;
    if (!report->landlock_all_threads) return 1;
    return seen.load();
  });
  EXPECT_EQ(outcome.exit_code, EACCES);
}

TEST_F(RestrictAllThreads, RestrictsAThreadBlockedInASystemCall) {
  auto outcome = run_unconfined([this] {
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0) return 2;
    std::atomic<int> seen{-1};
    std::thread reader([&] {
      char byte = 0;
      // SA_RESTART: the read goes on after the handler has run.
      while (read(pipe_fds[0], &byte, 1) < 0 && errno == EINTR) {
      }
      seen = read_errno(seed_);
    });
    std::this_thread::sleep_for(50ms);  // let it block in read
    auto report = confine_this_process(cuda_policy());
    if (write(pipe_fds[1], "x", 1) != 1) return 3;
    reader.join();
    if (!report) return kConfineFailed;
    return report->landlock_all_threads ? seen.load() : 1;
  });
  EXPECT_EQ(outcome.exit_code, EACCES);
}

TEST_F(RestrictAllThreads, RestrictsThreadsStartedAfterConfinement) {
  auto outcome = run_confined(cuda_policy(), [this](const ConfineReport&) {
    int seen = -1;
    std::thread later([&] { seen = read_errno(seed_); });
    later.join();
    return seen;
  });
  EXPECT_EQ(outcome.exit_code, EACCES);
}

// Threads restricted one by one each get a domain; they must still signal each other.
TEST_F(RestrictAllThreads, LeavesThreadsAbleToSignalEachOther) {
  auto outcome = run_unconfined([] {
    static std::atomic<int> caught{0};
    signal(SIGUSR1, [](int) { ++caught; });
    std::atomic<bool> stop{false};
    std::thread earlier([&] {
      while (!stop) std::this_thread::sleep_for(1ms);
    });
    auto report = confine_this_process(cuda_policy());
    if (!report) return kConfineFailed;
    int sent = pthread_kill(earlier.native_handle(), SIGUSR1);
    for (int i = 0; i < 1000 && caught == 0; ++i) std::this_thread::sleep_for(1ms);
    stop = true;
    earlier.join();
    return sent == 0 && caught == 1 ? 0 : 1;
  });
  EXPECT_EQ(outcome.exit_code, 0);
}

// Before ABI 8 a thread that blocks the signal cannot be reached: the report says so, and that
// thread really keeps its file access (what the report warns of).
TEST_F(RestrictAllThreads, NamesAThreadThatBlocksTheSignalAndLeavesItUnrestricted) {
  if (landlock_abi_version() >= 8) {
    GTEST_SKIP() << "Landlock ABI 8 restricts every thread at once (TSYNC); no signal is used";
  }
  auto outcome = run_unconfined([this] {
    std::atomic<bool> go{false};
    std::atomic<int> seen{-1};
    std::thread blocker([&] {
      sigset_t urgent;
      sigemptyset(&urgent);
      sigaddset(&urgent, SIGURG);
      pthread_sigmask(SIG_BLOCK, &urgent, nullptr);
      while (!go) std::this_thread::sleep_for(1ms);
      seen = read_errno(seed_);
    });
    std::this_thread::sleep_for(50ms);  // let it block the signal
    auto report = confine_this_process(cuda_policy());
    go = true;
    blocker.join();
    if (!report) return kConfineFailed;
    if (report->landlock_all_threads) return 1;
    if (!has_note(*report, "blocks SIGURG")) return 2;
    if (read_errno(seed_) != EACCES) return 3;  // the calling thread is restricted
    return seen.load();
  });
  EXPECT_EQ(outcome.exit_code, 0) << "0: the blocking thread read the seed, as the report warned";
}

}  // namespace
}  // namespace kiln::testing
