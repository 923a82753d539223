#include "kiln/mcp/worker_threads.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace kiln::mcp {
namespace {

using namespace std::chrono_literals;

TEST(WorkerThreads, JoinAllWaitsForEveryThread) {
  std::atomic<int> finished{0};
  WorkerThreads workers;
  for (int i = 0; i < 4; ++i)
    workers.start([&finished] {
      std::this_thread::sleep_for(20ms);
      ++finished;
    });
  workers.join_all();
  EXPECT_EQ(finished.load(), 4);
}

TEST(WorkerThreads, ReapLeavesARunningThreadAlone) {
  std::atomic<bool> release{false};
  std::atomic<bool> done{false};
  WorkerThreads workers;
  workers.start([&] {
    while (!release) std::this_thread::sleep_for(1ms);
    done = true;
  });
  workers.reap();  // returns at once: the thread is still at work
  EXPECT_FALSE(done.load());
  release = true;
  workers.join_all();
  EXPECT_TRUE(done.load());
}

TEST(WorkerThreads, TheDestructorJoins) {
  std::atomic<bool> done{false};
  {
    WorkerThreads workers;
    workers.start([&done] {
      std::this_thread::sleep_for(20ms);
      done = true;
    });
  }
  EXPECT_TRUE(done.load());
}

}  // namespace
}  // namespace kiln::mcp
