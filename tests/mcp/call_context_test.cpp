// CallContext: progress only with a token and only increasing; the heartbeat keeps a long call
// visibly alive without overtaking the handler's own progress.
#include "kiln/mcp/call_context.h"

#include <gmock/gmock.h>

#include <mutex>
#include <thread>
#include <vector>

namespace kiln::mcp {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

// The notifications a context sent, from any thread.
struct Sent {
  std::mutex mutex;
  std::vector<json> notes;

  CallContext context(json token) {
    return CallContext(
        [this](json note) {
          std::lock_guard lock(mutex);
          notes.push_back(std::move(note));
        },
        std::move(token), std::make_shared<std::atomic<bool>>(false),
        std::make_shared<std::atomic<LogLevel>>(LogLevel::kInfo));
  }
  std::vector<json> progress() {
    std::lock_guard lock(mutex);
    std::vector<json> out;
    for (const auto& n : notes)
      if (n["method"] == "notifications/progress") out.push_back(n["params"]);
    return out;
  }
};

TEST(CallContext, ProgressNeedsATokenAndMustIncrease) {
  Sent none;
  CallContext silent = none.context(nullptr);
  silent.progress(1, 10, "one");
  EXPECT_TRUE(none.progress().empty());

  Sent sent;
  CallContext call = sent.context("t");
  call.progress(1, 10, "one");
  call.progress(1, 10, "again");  // not an increase: dropped
  call.progress(2, 10, "two");
  const auto p = sent.progress();
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0]["progressToken"], "t");
  EXPECT_EQ(p[1]["progress"], 2);
  EXPECT_EQ(p[1]["total"], 10);
}

TEST(CallContext, TheHeartbeatSendsIncreasingProgressWhileTheCallIsQuiet) {
  Sent sent;
  CallContext call = sent.context(7);
  call.progress(3, 10, "workload 3");
  {
    const CallContext::Heartbeat heartbeat(call, std::chrono::milliseconds(40));
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
  }
  const auto p = sent.progress();
  ASSERT_GE(p.size(), 3u);  // the handler's, then beats (about fifteen; two show it)
  for (size_t i = 1; i < p.size(); ++i) {
    EXPECT_GT(p[i]["progress"].get<double>(), p[i - 1]["progress"].get<double>());
    EXPECT_THAT(p[i]["message"].get<std::string>(), HasSubstr("working, "));
  }
  // The beats step by far less than a workload: the handler's next value still increases.
  EXPECT_LT(p.back()["progress"].get<double>(), 3.001);
  call.progress(3.001, 10, "stage");
  EXPECT_EQ(sent.progress().back()["message"], "stage");
  // Once the heartbeat is gone, nothing more is sent.
  const size_t after = sent.progress().size();
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  EXPECT_EQ(sent.progress().size(), after);
}

TEST(CallContext, TheHandlersOwnProgressPostponesTheBeat) {
  Sent sent;
  CallContext call = sent.context("t");
  {
    const CallContext::Heartbeat heartbeat(call, std::chrono::milliseconds(3000));
    for (int i = 1; i <= 8; ++i) {  // progress every 10 ms, far inside the interval
      call.progress(i, 8, "step");
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  for (const auto& p : sent.progress()) EXPECT_EQ(p["message"], "step") << p.dump();
}

TEST(CallContext, WithoutATokenTheHeartbeatSendsNothing) {
  Sent sent;
  CallContext call = sent.context(nullptr);
  {
    const CallContext::Heartbeat heartbeat(call, std::chrono::milliseconds(10));
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
  }
  EXPECT_TRUE(sent.progress().empty());
}

}  // namespace
}  // namespace kiln::mcp
