// SlurmJobPoller over the scripted Slurm: one squeue per poll for every job watched, each
// job's answer handed out once, nothing asked while nothing is watched, a cancel that does not
// wait for a poll, and slurmctld's silence as every job's error.
#include "kiln/runner/slurm_job_poller.h"

#include <gmock/gmock.h>

#include <thread>

#include "slurm_fake.h"

namespace kiln::runner {
namespace {

using namespace std::chrono_literals;
using namespace kiln::runner::testing;
using ::testing::HasSubstr;

TEST(SlurmJobPoller, EveryJobInFlightIsAskedInOneSqueuePerPoll) {
  ScriptedSlurm slurm;
  slurm.states = {"PENDING", "RUNNING", "COMPLETED"};
  SlurmBackend backend(slurm, "");
  SlurmJobPoller poller(backend, 100ms);  // slow enough that each waiter sees every poll
  const std::vector<std::string> ids{"7", "8", "9"};
  for (const auto& id : ids) poller.watch(id);
  std::atomic<bool> cancel{false};
  std::map<std::string, std::vector<SlurmState>> seen;
  std::vector<std::thread> waiters;
  std::mutex seen_mutex;
  for (const auto& id : ids)
    waiters.emplace_back([&, id] {
      while (true) {
        auto answer = poller.next(id, cancel);
        ASSERT_TRUE(answer && *answer) << id;
        std::lock_guard lock(seen_mutex);
        seen[id].push_back((*answer)->state);
        if (!is_ended((*answer)->state)) continue;
        poller.forget(id);
        return;
      }
    });
  for (auto& waiter : waiters) waiter.join();
  // Each job saw its own states in order, each poll's answer once.
  for (const auto& id : ids)
    EXPECT_EQ(seen[id], (std::vector<SlurmState>{SlurmState::kPending, SlurmState::kRunning,
                                                 SlurmState::kCompleted}))
        << id;
  // One squeue per poll naming every job watched: three polls (four when the first began
  // before all three were watched), where one squeue per job would have made nine.
  const auto lists = slurm.squeue_job_lists();
  EXPECT_LE(lists.size(), 4u) << ::testing::PrintToString(lists);
  EXPECT_GE(std::count(lists.begin(), lists.end(), "7,8,9"), 2) << ::testing::PrintToString(lists);
  EXPECT_FALSE(slurm.called("sacct"));
}

TEST(SlurmJobPoller, AForgottenJobLeavesThePollAndNothingIsAskedWhenNoneIsWatched) {
  ScriptedSlurm slurm;
  slurm.states = {"RUNNING"};
  SlurmBackend backend(slurm, "");
  SlurmJobPoller poller(backend, 5ms);
  std::this_thread::sleep_for(50ms);
  EXPECT_TRUE(slurm.calls().empty());  // idle: no job, no query
  std::atomic<bool> cancel{false};
  poller.watch("1");
  poller.watch("2");
  ASSERT_TRUE(poller.next("1", cancel));
  poller.forget("1");
  ASSERT_TRUE(poller.next("2", cancel));
  ASSERT_TRUE(poller.next("2", cancel));
  EXPECT_EQ(slurm.squeue_job_lists().back(), "2");
  EXPECT_FALSE(poller.next("1", cancel));  // no longer watched: no answer to wait for
  poller.forget("2");
  const size_t calls = slurm.calls().size();
  std::this_thread::sleep_for(50ms);
  EXPECT_LE(slurm.calls().size(), calls + 1);  // at most the round under way
}

TEST(SlurmJobPoller, CancelEndsTheWaitWithoutAPoll) {
  ScriptedSlurm slurm;
  slurm.states = {"RUNNING"};
  SlurmBackend backend(slurm, "");
  SlurmJobPoller poller(backend, 60s);  // the second poll would come a minute later
  std::atomic<bool> cancel{false};
  poller.watch("1");
  ASSERT_TRUE(poller.next("1", cancel));  // the first poll
  std::thread canceller([&] {
    std::this_thread::sleep_for(50ms);
    cancel = true;
  });
  const auto started = std::chrono::steady_clock::now();
  EXPECT_FALSE(poller.next("1", cancel));
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  canceller.join();
}

TEST(SlurmJobPoller, SlurmctldDownIsEveryWatchedJobsError) {
  ScriptedSlurm slurm;
  slurm.controller_down = true;
  SlurmBackend backend(slurm, "");
  SlurmJobPoller poller(backend, 5ms);
  std::atomic<bool> cancel{false};
  poller.watch("1");
  poller.watch("2");
  for (const char* id : {"1", "2"}) {
    auto answer = poller.next(id, cancel);
    ASSERT_TRUE(answer);
    ASSERT_FALSE(*answer);
    EXPECT_THAT(answer->error().message, HasSubstr("scontrol ping"));
  }
  EXPECT_GE(poller.polls(), 1u);
}

}  // namespace
}  // namespace kiln::runner
