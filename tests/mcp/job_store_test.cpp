// JobStore: jobs on threads of their own, waited for within a budget, kept and written to a
// directory so another store (another kiln process) finds their results.
#include "kiln/mcp/job_store.h"

#include <gtest/gtest.h>

#include <thread>

#include "temp_dir.h"

namespace kiln::mcp {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

ToolResult answer(const std::string& text) {
  ToolResult result;
  result.structured = json{{"text", text}};
  result.text = text;
  return result;
}

// Works until cancelled (or 10 s), reporting progress every 10 ms.
ToolResult until_cancelled(CallContext& context) {
  const auto end = std::chrono::steady_clock::now() + 10s;
  for (int step = 1; !context.cancelled() && std::chrono::steady_clock::now() < end; ++step) {
    context.progress(step);
    std::this_thread::sleep_for(10ms);
  }
  return answer(context.cancelled() ? "cancelled" : "done");
}

class JobStoreTest : public ::testing::Test {
 protected:
  CallContext waiter_ = CallContext::detached();
  testing::TempDir dir_;
};

TEST_F(JobStoreTest, WaitReturnsTheResultOfAFinishedJob) {
  JobStore jobs;
  auto id = jobs.start("echo", [](CallContext&) { return answer("hello"); });
  ASSERT_TRUE(id.ok());
  auto status = jobs.wait(*id, 5s, waiter_);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->state, JobState::kDone);
  EXPECT_EQ(status->tool, "echo");
  ASSERT_TRUE(status->result.has_value());
  EXPECT_EQ(status->result->structured["text"], "hello");
}

TEST_F(JobStoreTest, WaitPastItsBudgetSaysRunningAndTheWorkGoesOn) {
  JobStore jobs;
  auto id = jobs.start("slow", [](CallContext&) {
    std::this_thread::sleep_for(300ms);
    return answer("late");
  });
  ASSERT_TRUE(id.ok());
  auto first = jobs.wait(*id, 10ms, waiter_);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->state, JobState::kRunning);
  EXPECT_FALSE(first->result.has_value());
  auto second = jobs.wait(*id, 5s, waiter_);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->state, JobState::kDone);
  EXPECT_EQ(second->result->text, "late");
}

TEST_F(JobStoreTest, TheWaiterGetsTheJobsProgressAndItsCancellationDoesNotStopTheJob) {
  JobStore jobs;
  auto id = jobs.start("work", until_cancelled);
  ASSERT_TRUE(id.ok());
  std::vector<json> notes;
  std::mutex mutex;
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  CallContext waiter(
      [&](json note) {
        std::lock_guard lock(mutex);
        notes.push_back(note);
      },
      "tok", cancelled, nullptr);
  std::thread canceller([cancelled] {
    std::this_thread::sleep_for(100ms);
    cancelled->store(true);
  });
  auto status = jobs.wait(*id, 5s, waiter);
  canceller.join();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->state, JobState::kRunning);  // the waiter stopped, the job did not
  {
    std::lock_guard lock(mutex);
    ASSERT_FALSE(notes.empty());
    EXPECT_EQ(notes[0]["params"]["progressToken"], "tok");
  }
  EXPECT_TRUE(jobs.cancel(*id));
  auto ended = jobs.wait(*id, 5s, waiter_);
  ASSERT_TRUE(ended.has_value());
  EXPECT_EQ(ended->result->text, "cancelled");
}

TEST_F(JobStoreTest, AKeptJobsResultIsReadByAnotherStoreFromTheDirectory) {
  std::string id;
  {
    JobStore first;
    first.set_directory(dir_.path());
    auto started = first.start("echo", [](CallContext&) {
      std::this_thread::sleep_for(50ms);
      return answer("stored");
    });
    ASSERT_TRUE(started.ok());
    id = *started;
    first.keep(id);
    ASSERT_EQ(first.wait(id, 5s, waiter_)->state, JobState::kDone);
  }
  EXPECT_TRUE(std::filesystem::exists(dir_.path() / (id + ".json")));
  JobStore second;
  second.set_directory(dir_.path());
  auto status = second.wait(id, 1s, waiter_);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->state, JobState::kDone);
  EXPECT_EQ(status->tool, "echo");
  EXPECT_EQ(status->result->structured["text"], "stored");
}

TEST_F(JobStoreTest, AJobStillRunningWhenItsStoreEndedIsLost) {
  std::string id;
  {
    JobStore first;
    first.set_directory(dir_.path());
    auto started = first.start("work", until_cancelled);
    ASSERT_TRUE(started.ok());
    id = *started;
    first.keep(id);
  }  // cancelled and joined here, its file left as running
  JobStore second;
  second.set_directory(dir_.path());
  auto status = second.wait(id, 1s, waiter_);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->state, JobState::kLost);
  EXPECT_EQ(status->tool, "work");
}

TEST_F(JobStoreTest, RefusesAJobPastTheRunningLimit) {
  JobStore jobs(JobLimits{.max_running = 1, .max_kept = 4});
  auto first = jobs.start("work", until_cancelled);
  ASSERT_TRUE(first.ok());
  auto second = jobs.start("work", until_cancelled);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message.find("wait_job"), std::string::npos);
  jobs.discard(*first);
}

TEST_F(JobStoreTest, KeepsOnlyTheNewestFinishedJobsInMemoryAndOnDisk) {
  JobStore jobs(JobLimits{.max_running = 4, .max_kept = 2});
  jobs.set_directory(dir_.path());
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    auto id = jobs.start("echo", [i](CallContext&) { return answer(std::to_string(i)); });
    ASSERT_TRUE(id.ok());
    ASSERT_EQ(jobs.wait(*id, 5s, waiter_)->state, JobState::kDone);
    jobs.keep(*id);
    ids.push_back(*id);
  }
  EXPECT_FALSE(jobs.wait(ids[0], 0ms, waiter_).has_value());
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / (ids[0] + ".json")));
  EXPECT_EQ(jobs.wait(ids[2], 0ms, waiter_)->result->text, "2");
  EXPECT_EQ(jobs.list().size(), 2u);
}

TEST_F(JobStoreTest, ADiscardedJobIsCancelledAndForgotten) {
  JobStore jobs;
  std::atomic<bool> saw_cancel{false};
  auto id = jobs.start("work", [&](CallContext& context) {
    ToolResult result = until_cancelled(context);
    saw_cancel = context.cancelled();
    return result;
  });
  ASSERT_TRUE(id.ok());
  jobs.discard(*id);
  EXPECT_FALSE(jobs.wait(*id, 0ms, waiter_).has_value());
  for (int i = 0; i < 500 && !saw_cancel; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(saw_cancel);
}

TEST_F(JobStoreTest, NamesThatAreNotJobIdsAreNotLookedUpOnDisk) {
  JobStore jobs;
  jobs.set_directory(dir_.path());
  kiln::testing::write_text(dir_.path() / "x.json", R"({"state": "done", "result": {}})");
  EXPECT_FALSE(jobs.wait("x", 0ms, waiter_).has_value());
  EXPECT_FALSE(jobs.wait("../x", 0ms, waiter_).has_value());
}

TEST_F(JobStoreTest, AThrowingJobEndsWithAnInternalError) {
  JobStore jobs;
  auto id = jobs.start("bad", [](CallContext&) -> ToolResult { throw std::runtime_error("boom"); });
  ASSERT_TRUE(id.ok());
  auto status = jobs.wait(*id, 5s, waiter_);
  ASSERT_TRUE(status->result.has_value());
  EXPECT_TRUE(status->result->is_error);
  EXPECT_EQ(status->result->structured["error"]["code"], "internal_error");
}

}  // namespace
}  // namespace kiln::mcp
