#include "kiln/base/stop_signals.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <future>

namespace kiln {
namespace {

using namespace std::chrono_literals;

bool blocked(int signal) {
  sigset_t mask;
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  return sigismember(&mask, signal) == 1;
}

// Signals sent to the whole process reach whichever thread does not block them, so those
// tests run in a child of their own (a "threadsafe" death test re-runs only that test).
class StopSignalsDeathTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST(StopSignals, BlocksBothSignalsAndRestoresTheMaskWhenFinished) {
  ASSERT_FALSE(blocked(SIGTERM));
  {
    StopSignals signals;
    EXPECT_TRUE(blocked(SIGINT));
    EXPECT_TRUE(blocked(SIGTERM));
  }
  EXPECT_FALSE(blocked(SIGINT));
  EXPECT_FALSE(blocked(SIGTERM));
}

TEST(StopSignals, FinishWithoutASignalWakesTheWaiterWithoutCallingTheStop) {
  std::atomic<int> calls{0};
  StopSignals signals;
  signals.watch([&](int) { ++calls; });
  auto start = std::chrono::steady_clock::now();
  signals.finish();  // must not wait for a signal that never comes
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_EQ(calls, 0);
  EXPECT_FALSE(blocked(SIGTERM));
  signals.finish();  // again: nothing left to do
}

// The child exits 0 when the stop ran once with SIGTERM, 3 otherwise.
void stop_on_sigterm_then_exit() {
  StopSignals signals;
  std::promise<int> stopped;
  std::atomic<int> calls{0};
  signals.watch([&](int received) {
    if (++calls == 1) stopped.set_value(received);
  });
  kill(getpid(), SIGTERM);
  auto received = stopped.get_future();
  if (received.wait_for(5s) != std::future_status::ready) std::_Exit(3);
  int signal = received.get();
  signals.finish();
  std::_Exit(signal == SIGTERM && calls == 1 ? 0 : 3);
}

TEST_F(StopSignalsDeathTest, SigtermCallsTheStopOnItsWaiter) {
  EXPECT_EXIT(stop_on_sigterm_then_exit(), ::testing::ExitedWithCode(0), "");
}

// A second Ctrl-C while the server winds down is taken, not left to kill the process once
// the mask is restored.
void second_signal_then_exit() {
  StopSignals signals;
  std::promise<void> stopped;
  signals.watch([&](int) { stopped.set_value(); });
  kill(getpid(), SIGINT);
  if (stopped.get_future().wait_for(5s) != std::future_status::ready) std::_Exit(3);
  kill(getpid(), SIGINT);  // pending: the waiter has returned and every thread blocks it
  signals.finish();
  std::_Exit(0);
}

TEST_F(StopSignalsDeathTest, ASecondSignalDuringShutdownDoesNotKillTheProcess) {
  EXPECT_EXIT(second_signal_then_exit(), ::testing::ExitedWithCode(0), "");
}

void signal_before_watch_then_exit() {
  {
    StopSignals signals;
    kill(getpid(), SIGTERM);  // the bind failed: no waiter was ever started
  }
  std::_Exit(0);
}

TEST_F(StopSignalsDeathTest, ASignalWithNoWaiterIsTakenWhenFinished) {
  EXPECT_EXIT(signal_before_watch_then_exit(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace kiln
