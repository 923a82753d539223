// RunnerClient against an in-process runner with the fake worker.
#include "kiln/runner/runner_client.h"

#include <gmock/gmock.h>

#include <atomic>

#include "runner_fixture.h"

namespace kiln::runner {
namespace {

using namespace kiln::runner::testing;
using ::testing::HasSubstr;

TEST(RunnerClient, RunReturnsTheResultAndEveryEventInOrder) {
  FakeRunner runner;
  RunnerClient client({runner.url(), ""});
  std::vector<json> events;
  RunCallbacks callbacks;
  callbacks.on_event = [&](const json& event) { events.push_back(event); };
  auto outcome = client.run(job_body("pass"), callbacks);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_EQ(outcome->state, "finished");
  EXPECT_EQ(outcome->result["status"], "passed");
  EXPECT_EQ(outcome->job_id.rfind("j-", 0), 0u);
  for (size_t i = 0; i < events.size(); ++i)
    EXPECT_EQ(events[i]["seq"], static_cast<int64_t>(i + 1));
  size_t progress = 0, stages = 0;
  for (const auto& event : events) {
    progress += event["event"] == "progress";
    stages += event["event"] == "stage";
  }
  EXPECT_EQ(progress, bundled_task().workloads.size());
  EXPECT_EQ(stages, 5u);  // build load verify timing done
}

TEST(RunnerClient, CancellationDeletesTheJobAndKillsTheWorker) {
  FakeRunner runner;
  RunnerClient client({runner.url(), ""});
  client.set_poll_seconds(0.2);
  std::atomic<bool> cancel{false};
  std::string job_id;
  RunCallbacks callbacks;
  callbacks.on_event = [&](const json& event) {
    if (event.value("stage", "") == "timing") cancel = true;  // it hangs from here
  };
  callbacks.cancelled = [&] { return cancel.load(); };
  auto start = std::chrono::steady_clock::now();
  auto outcome = client.run(job_body("hang"), callbacks);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_EQ(outcome->state, "cancelled");
  EXPECT_EQ(outcome->result["reason"], "cancelled");
  pid_t pid = runner.worker_pid(outcome->job_id);
  EXPECT_TRUE(process_gone(pid));
}

TEST(RunnerClient, HealthReadsTheRunner) {
  FakeRunner runner({0, 1});
  auto health = RunnerClient({runner.url(), ""}).health();
  ASSERT_TRUE(health.ok()) << health.error().message;
  EXPECT_EQ((*health)["gpus"].size(), 2u);
}

TEST(RunnerClient, AnUnreachableRunnerIsAnErrorThatNamesIt) {
  auto health = RunnerClient({"http://127.0.0.1:1", ""}).health(std::chrono::seconds(2));
  ASSERT_FALSE(health.ok());
  EXPECT_THAT(health.error().message, HasSubstr("http://127.0.0.1:1"));
  EXPECT_THAT(health.error().message, HasSubstr("kiln runner"));
}

TEST(RunnerClient, RejectionsCarryTheRunnersMessage) {
  FakeRunner runner;
  json body = job_body("pass");
  body["candidate"]["sha256"] = std::string(64, 'a');
  auto submitted = RunnerClient({runner.url(), ""}).submit(body);
  ASSERT_FALSE(submitted.ok());
  EXPECT_THAT(submitted.error().message, HasSubstr("409"));
  EXPECT_THAT(submitted.error().message, HasSubstr("candidate.sha256"));
}

TEST(RunnerClient, AWrongTokenSaysWhereTheTokenComesFrom) {
  FakeRunner runner({0}, [](RunnerOptions& o) { o.token = "the-right-token-0123456789"; });
  auto health = RunnerClient({runner.url(), "a-wrong-token-0123456789"}).health();
  ASSERT_FALSE(health.ok());
  EXPECT_THAT(health.error().message, HasSubstr("401"));
  EXPECT_THAT(health.error().message, HasSubstr("KILN_RUNNER_TOKEN"));
  EXPECT_TRUE(RunnerClient({runner.url(), "the-right-token-0123456789"}).health().ok());
}

TEST(RunnerClient, RefusesUrlsItCannotUse) {
  for (const char* url :
       {"https://gpu:8000", "gpu:8000", "http://gpu:8000/v1", "http://gpu:port"}) {
    auto health = RunnerClient({url, ""}).health();
    ASSERT_FALSE(health.ok()) << url;
  }
}

}  // namespace
}  // namespace kiln::runner
