// with_wait_budget: a long tool answers within wait_s, with the running shape its outputSchema
// describes, and its work goes on as a job whose result wait returns.
#include "kiln/mcp/long_call.h"

#include <gtest/gtest.h>

#include <thread>

#include "kiln/mcp/schema_validator.h"
#include "kiln/mcp/tool_registry.h"

namespace kiln::mcp {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

// sleep {ms}: sleeps, or stops when cancelled; {"slept": true|false, "status": "passed"}.
Tool sleep_tool(std::shared_ptr<std::atomic<bool>> saw_cancel = nullptr) {
  Tool tool;
  tool.name = "sleep";
  tool.title = "Sleep";
  tool.description = "Sleeps for a test.";
  tool.input_schema = json{{"type", "object"},
                           {"properties", {{"ms", {{"type", "integer"}}}}},
                           {"required", {"ms"}},
                           {"additionalProperties", false}};
  tool.output_schema = json{{"type", "object"},
                            {"properties",
                             {{"slept", {{"type", "boolean"}}},
                              {"status", {{"type", "string"}, {"enum", {"passed", "failed"}}}}}},
                            {"required", {"slept", "status"}}};
  tool.handler = [saw_cancel](const json& arguments, CallContext& context) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(arguments["ms"]);
    while (std::chrono::steady_clock::now() < end && !context.cancelled())
      std::this_thread::sleep_for(5ms);
    if (saw_cancel) saw_cancel->store(context.cancelled());
    ToolResult result;
    result.structured = json{{"slept", !context.cancelled()}, {"status", "passed"}};
    result.text = "slept";
    return result;
  };
  return tool;
}

class LongCallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto wrapped = with_wait_budget(sleep_tool(saw_cancel_), jobs_);
    ASSERT_TRUE(wrapped.ok()) << wrapped.error().message;
    ASSERT_TRUE(registry_.add(std::move(*wrapped)).ok());
    context_.allow_background();
  }
  ToolResult call(const json& arguments) { return registry_.run("sleep", arguments, context_); }
  const json& output_schema() { return registry_.find("sleep")->output_schema; }

  std::shared_ptr<JobStore> jobs_ = std::make_shared<JobStore>();
  std::shared_ptr<std::atomic<bool>> saw_cancel_ = std::make_shared<std::atomic<bool>>(false);
  std::shared_ptr<std::atomic<bool>> cancelled_ = std::make_shared<std::atomic<bool>>(false);
  CallContext context_{[](json) {}, nullptr, cancelled_, nullptr};
  ToolRegistry registry_;
};

TEST_F(LongCallTest, DeclaresWaitSAndTheRunningShapeBesideItsOwn) {
  const Tool* tool = registry_.find("sleep");
  ASSERT_NE(tool, nullptr);
  EXPECT_EQ(tool->input_schema["properties"]["wait_s"]["type"], "number");
  const json status_enum = output_schema()["properties"]["status"]["enum"];
  EXPECT_NE(std::find(status_enum.begin(), status_enum.end(), "running"), status_enum.end());
  EXPECT_EQ(output_schema()["anyOf"].size(), 3u);  // its fields, the running answer, the error
}

TEST_F(LongCallTest, AWorkDoneWithinTheBudgetIsTheToolsOwnResult) {
  ToolResult result = call({{"ms", 0}, {"wait_s", 10}});
  EXPECT_FALSE(result.is_error);
  EXPECT_EQ(result.structured["slept"], true);
  EXPECT_FALSE(validate_against_schema(output_schema(), result.structured).has_value());
  EXPECT_TRUE(jobs_->list().empty());  // nothing kept: the call took its result
}

TEST_F(LongCallTest, AWorkPastTheBudgetAnswersRunningAndWaitReturnsItsResult) {
  ToolResult running = call({{"ms", 300}, {"wait_s", 0}});
  EXPECT_FALSE(running.is_error);
  EXPECT_EQ(running.structured["status"], "running");
  EXPECT_EQ(running.structured["tool"], "sleep");
  EXPECT_EQ(running.structured["next_call"]["name"], "wait_job");
  auto problem = validate_against_schema(output_schema(), running.structured);
  EXPECT_FALSE(problem.has_value()) << *problem;
  const std::string id = running.structured["job_id"];
  EXPECT_NE(running.text.find(id), std::string::npos);
  auto waiter = CallContext::detached();
  auto status = jobs_->wait(id, 5s, waiter);
  ASSERT_TRUE(status.has_value());
  ToolResult done = job_answer(*status);
  EXPECT_EQ(done.structured["slept"], true);
  EXPECT_EQ(done.text, "slept");
}

TEST_F(LongCallTest, ACancellationWhileTheCallWaitsStopsTheWork) {
  std::thread canceller([this] {
    std::this_thread::sleep_for(50ms);
    cancelled_->store(true);
  });
  ToolResult result = call({{"ms", 5000}, {"wait_s", 30}});
  canceller.join();
  EXPECT_TRUE(result.is_error);
  EXPECT_TRUE(jobs_->list().empty());
  for (int i = 0; i < 500 && !saw_cancel_->load(); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(saw_cancel_->load());
}

TEST_F(LongCallTest, WithoutBackgroundTheCallWaitsForTheWholeWork) {
  auto context = CallContext::detached();
  ToolResult result = registry_.run("sleep", {{"ms", 100}, {"wait_s", 0}}, context);
  EXPECT_EQ(result.structured["slept"], true);
}

TEST_F(LongCallTest, AJobWhoseProcessEndedAnswersRunFailed) {
  JobStatus lost;
  lost.id = "job-0123456789abcdef";
  lost.tool = "benchmark";
  lost.state = JobState::kLost;
  ToolResult result = job_answer(lost);
  EXPECT_TRUE(result.is_error);
  EXPECT_EQ(result.structured["error"]["code"], "run_failed");
  EXPECT_NE(result.text.find("call benchmark again"), std::string::npos);
}

TEST_F(LongCallTest, RefusesAToolThatDeclaresARunningField) {
  Tool tool = sleep_tool();
  tool.output_schema["properties"]["elapsed_s"] = {{"type", "string"}};
  EXPECT_FALSE(with_wait_budget(tool, jobs_).ok());
  Tool own_wait = sleep_tool();
  own_wait.input_schema["properties"]["wait_s"] = {{"type", "number"}};
  EXPECT_FALSE(with_wait_budget(own_wait, jobs_).ok());
}

}  // namespace
}  // namespace kiln::mcp
