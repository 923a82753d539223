#include "kiln/mcp/tasks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "kiln/mcp/json_rpc.h"
#include "kiln/mcp/session.h"
#include "test_server.h"

namespace kiln::mcp {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using json = nlohmann::json;

ProtocolContext negotiated() {
  ProtocolContext context;
  context.version = "2026-07-28";
  context.stateless = true;
  context.client_capabilities = tasks_capability();
  return context;
}

ToolResult text(const std::string& value) {
  ToolResult result;
  result.structured = json{{"text", value}};
  result.text = value;
  return result;
}

// The RpcError `call` throws; fails the test when it throws none.
RpcError error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const RpcFailure& failure) {
    return failure.error;
  }
  ADD_FAILURE() << "no RpcFailure thrown";
  return {};
}

class TaskStoreTest : public ::testing::Test {
 protected:
  json get(const std::string& id) { return tasks.answer("tasks/get", {{"taskId", id}}, request); }
  json cancel(const std::string& id) {
    return tasks.answer("tasks/cancel", {{"taskId", id}}, request);
  }
  json update(const std::string& id, json responses) {
    return tasks.answer("tasks/update", {{"taskId", id}, {"inputResponses", std::move(responses)}},
                        request);
  }
  // tasks/get until the status is not `from` (or 5 s passed).
  json get_until_not(const std::string& id, const std::string& from) {
    json task = get(id);
    for (int i = 0; i < 500 && task["status"] == from; ++i) {
      std::this_thread::sleep_for(10ms);
      task = get(id);
    }
    return task;
  }
  std::string create(TaskStore::Work work) {
    auto created = tasks.create("tool", std::move(work));
    EXPECT_TRUE(created.ok());
    return created.ok() ? (*created)["taskId"].get<std::string>() : "";
  }

  std::shared_ptr<JobStore> jobs = std::make_shared<JobStore>();
  TaskStore tasks{jobs};
  ProtocolContext request = negotiated();
};

// Works until cancelled (at most 5 s).
ToolResult until_cancelled(CallContext& context) {
  for (int i = 0; i < 500 && !context.cancelled(); ++i) std::this_thread::sleep_for(10ms);
  return ToolResult::error(ErrorCode::kRunFailed, "cancelled");
}

TEST_F(TaskStoreTest, CreateAnswersAFlatCreateTaskResult) {
  auto created = tasks.create("tool", until_cancelled);
  ASSERT_TRUE(created.ok());
  EXPECT_EQ((*created)["resultType"], "task");
  EXPECT_EQ((*created)["status"], "working");
  EXPECT_THAT((*created)["taskId"].get<std::string>(), HasSubstr("job-"));
  EXPECT_TRUE((*created)["ttlMs"].is_number_integer());
  EXPECT_TRUE((*created)["pollIntervalMs"].is_number_integer());
  EXPECT_THAT((*created)["createdAt"].get<std::string>(),
              ::testing::MatchesRegex("[0-9]{4}-[0-9]{2}-[0-9]{2}T.*Z"));
  EXPECT_FALSE(created->contains("task"));
  EXPECT_FALSE(created->contains("result"));
  // Known at once: a tasks/get right after the CreateTaskResult resolves.
  EXPECT_EQ(get((*created)["taskId"])["status"], "working");
  cancel((*created)["taskId"]);
}

TEST_F(TaskStoreTest, CompletedTaskInlinesTheToolResult) {
  const std::string id = create([](CallContext&) { return text("done"); });
  json task = get_until_not(id, "working");
  EXPECT_EQ(task["status"], "completed");
  EXPECT_EQ(task["taskId"], id);
  EXPECT_EQ(task["result"]["content"][0]["text"], "done");
  EXPECT_EQ(task["result"]["isError"], false);
  EXPECT_FALSE(task.contains("error"));
}

TEST_F(TaskStoreTest, ToolErrorCompletesWithIsError) {
  const std::string id = create([](CallContext&) { return ToolResult::error("it failed"); });
  json task = get_until_not(id, "working");
  EXPECT_EQ(task["status"], "completed");
  EXPECT_EQ(task["result"]["isError"], true);
}

TEST_F(TaskStoreTest, ProtocolErrorFailsTheTaskWithTheError) {
  const std::string id =
      create([](CallContext&) -> ToolResult { fail(error_code::kInternalError, "broken"); });
  json task = get_until_not(id, "working");
  EXPECT_EQ(task["status"], "failed");
  EXPECT_EQ(task["error"]["code"], error_code::kInternalError);
  EXPECT_EQ(task["error"]["message"], "broken");
  EXPECT_FALSE(task.contains("result"));
}

TEST_F(TaskStoreTest, CancelStopsAWorkingTaskWithAnEmptyAck) {
  const std::string id = create(until_cancelled);
  EXPECT_EQ(cancel(id), json::object());
  EXPECT_EQ(get(id)["status"], "cancelled");
  EXPECT_EQ(cancel(id), json::object());  // idempotent
  EXPECT_EQ(get(id)["status"], "cancelled");
}

TEST_F(TaskStoreTest, CancelOfAFinishedTaskLeavesItAsItEnded) {
  const std::string id = create([](CallContext&) { return text("done"); });
  ASSERT_EQ(get_until_not(id, "working")["status"], "completed");
  EXPECT_EQ(cancel(id), json::object());
  EXPECT_EQ(get(id)["status"], "completed");
}

TEST_F(TaskStoreTest, UnknownTaskIsInvalidParams) {
  for (const char* method : {"tasks/get", "tasks/cancel", "tasks/update"}) {
    RpcError error = error_of([&] {
      tasks.answer(method, {{"taskId", "job-0000000000000000"}, {"inputResponses", json::object()}},
                   request);
    });
    EXPECT_EQ(error.code, error_code::kInvalidParams) << method;
    EXPECT_THAT(error.message, HasSubstr("unknown task")) << method;
  }
  EXPECT_EQ(error_of([&] { tasks.answer("tasks/get", json::object(), request); }).code,
            error_code::kInvalidParams);
}

TEST_F(TaskStoreTest, TaskMethodsNeedTheExtension) {
  ProtocolContext plain = negotiated();
  plain.client_capabilities = json::object();
  RpcError error = error_of([&] { tasks.answer("tasks/get", {{"taskId", "x"}}, plain); });
  EXPECT_EQ(error.code, error_code::kMissingRequiredClientCapability);
  EXPECT_TRUE(error.data["requiredCapabilities"]["extensions"].contains(kTasksExtension));
}

TEST_F(TaskStoreTest, AskParksTheTaskUntilEveryInputIsAnswered) {
  const std::string id = create([](CallContext& context) {
    auto answers = context.ask(
        {{"a", {{"method", "elicitation/create"}}}, {"b", {{"method", "elicitation/create"}}}});
    if (!answers) return ToolResult::error("no answers");
    return text((*answers)["a"].get<std::string>() + (*answers)["b"].get<std::string>());
  });
  json task = get_until_not(id, "working");
  ASSERT_EQ(task["status"], "input_required");
  EXPECT_EQ(task["inputRequests"].size(), 2u);
  EXPECT_EQ(task["inputRequests"]["a"]["method"], "elicitation/create");

  EXPECT_EQ(update(id, {{"a", "x"}, {"unknown", 1}}), json::object());
  task = get(id);
  EXPECT_EQ(task["status"], "input_required");
  EXPECT_FALSE(task["inputRequests"].contains("a"));
  EXPECT_TRUE(task["inputRequests"].contains("b"));

  update(id, {{"b", "y"}});
  task = get_until_not(id, "input_required");
  task = get_until_not(id, "working");
  EXPECT_EQ(task["status"], "completed");
  EXPECT_EQ(task["result"]["content"][0]["text"], "xy");
}

TEST_F(TaskStoreTest, CancelEndsATaskParkedOnInput) {
  const std::string id = create([](CallContext& context) {
    return context.ask({{"a", json::object()}}) ? text("answered") : ToolResult::error("none");
  });
  ASSERT_EQ(get_until_not(id, "working")["status"], "input_required");
  cancel(id);
  EXPECT_EQ(get(id)["status"], "cancelled");
}

TEST_F(TaskStoreTest, UpdateNeedsAnObjectOfInputResponses) {
  const std::string id = create(until_cancelled);
  RpcError error = error_of([&] {
    tasks.answer("tasks/update", {{"taskId", id}, {"inputResponses", 3}}, request);
  });
  EXPECT_EQ(error.code, error_code::kInvalidParams);
  cancel(id);
}

TEST(TaskStoreTtlTest, FinishedTaskIsForgottenAfterItsTtl) {
  auto jobs = std::make_shared<JobStore>();
  TaskStore tasks(jobs, TaskLimits{.ttl_ms = 200, .poll_interval_ms = 10});
  auto created = tasks.create("tool", [](CallContext&) { return text("done"); });
  ASSERT_TRUE(created.ok());
  const json get{{"taskId", (*created)["taskId"]}};
  EXPECT_EQ((*created)["ttlMs"], 200);
  EXPECT_NO_THROW(tasks.answer("tasks/get", get, negotiated()));  // within its ttlMs
  std::this_thread::sleep_for(400ms);
  EXPECT_EQ(error_of([&] { tasks.answer("tasks/get", get, negotiated()); }).code,
            error_code::kInvalidParams);
}

TEST(TaskSupportTest, ToolsListShowsTaskSupport) {
  ToolRegistry registry;
  Tool optional = testing::make_tool("optional_tool");
  optional.task_support = TaskSupport::kOptional;
  ASSERT_TRUE(registry.add(optional).ok());
  ASSERT_TRUE(registry.add(testing::make_tool("plain_tool")).ok());
  json tools = registry.list()["tools"];
  for (const auto& tool : tools) {
    if (tool["name"] == "optional_tool")
      EXPECT_EQ(tool["execution"]["taskSupport"], "optional");
    else
      EXPECT_FALSE(tool.contains("execution"));
  }
}

// ---- through a session: which tools/call becomes a task ----

class LastReply : public Outbox {
 public:
  void notify(const json&, const json&) override {}
  void respond(const json& id, std::optional<json> response) override {
    std::lock_guard lock(mutex_);
    replies_[id.dump()] = response.value_or(json());
    changed_.notify_all();
  }
  json wait(const json& id) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, 5s, [&] { return replies_.count(id.dump()) > 0; });
    return replies_.count(id.dump()) ? replies_[id.dump()] : json();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, json> replies_;
};

class SessionTaskTest : public ::testing::Test {
 protected:
  SessionTaskTest() {
    Tool optional = testing::make_tool("optional_tool");
    optional.task_support = TaskSupport::kOptional;
    optional.handler = [](const json&, CallContext&) { return text("optional ran"); };
    Tool required = testing::make_tool("required_tool");
    required.task_support = TaskSupport::kRequired;
    EXPECT_TRUE(server.tools().add(optional).ok());
    EXPECT_TRUE(server.tools().add(required).ok());
    EXPECT_TRUE(server.tools().add(testing::echo_tool()).ok());
  }
  json call(int id, const std::string& method, json params, bool with_tasks) {
    params["_meta"] = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                       {"io.modelcontextprotocol/clientCapabilities",
                        with_tasks ? tasks_capability() : json::object()}};
    session.handle({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}});
    return outbox.wait(id);
  }

  Server server{
      ServerInfo{.name = "kiln-test", .title = "kiln", .version = "0", .instructions = ""}};
  LastReply outbox;
  Session session{server, outbox};
};

TEST_F(SessionTaskTest, OnlyTheStatelessToolsListShowsTaskSupport) {
  auto execution_of = [](const json& list, const std::string& name) {
    for (const auto& tool : list["tools"])
      if (tool["name"] == name) return tool.value("execution", json());
    return json();
  };
  json stateless = call(1, "tools/list", json::object(), false)["result"];
  EXPECT_EQ(execution_of(stateless, "optional_tool")["taskSupport"], "optional");
  EXPECT_TRUE(execution_of(stateless, "echo").is_null());

  session.handle(
      {{"jsonrpc", "2.0"},
       {"id", 2},
       {"method", "initialize"},
       {"params", {{"protocolVersion", "2025-11-25"}, {"capabilities", json::object()}}}});
  ASSERT_TRUE(outbox.wait(2).contains("result"));
  session.handle({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
  session.handle({{"jsonrpc", "2.0"}, {"id", 3}, {"method", "tools/list"}});
  EXPECT_TRUE(execution_of(outbox.wait(3)["result"], "optional_tool").is_null());
}

TEST_F(SessionTaskTest, DiscoverAdvertisesTheExtension) {
  json result = call(1, "server/discover", json::object(), false)["result"];
  EXPECT_TRUE(result["capabilities"]["extensions"].contains(kTasksExtension));
  EXPECT_FALSE(result["capabilities"].contains("tasks"));
}

TEST_F(SessionTaskTest, TaskSupportingToolBecomesATaskOnlyForANegotiatingClient) {
  json task = call(1, "tools/call", {{"name", "optional_tool"}}, true)["result"];
  EXPECT_EQ(task["resultType"], "task");
  ASSERT_TRUE(task.contains("taskId"));
  json got = call(2, "tasks/get", {{"taskId", task["taskId"]}}, true)["result"];
  EXPECT_EQ(got["resultType"], "complete");
  EXPECT_EQ(got["taskId"], task["taskId"]);

  json plain = call(3, "tools/call", {{"name", "optional_tool"}}, false)["result"];
  EXPECT_EQ(plain["resultType"], "complete");
  EXPECT_EQ(plain["content"][0]["text"], "optional ran");
  EXPECT_FALSE(plain.contains("taskId"));
}

TEST_F(SessionTaskTest, ToolWithoutTaskSupportStaysInPlace) {
  json result = call(1, "tools/call",
                     {{"name", "echo"}, {"arguments", {{"text", "hi"}}}, {"task", {{"ttl", 1}}}},
                     true)["result"];
  EXPECT_EQ(result["resultType"], "complete");
  EXPECT_EQ(result["content"][0]["text"], "hi");
}

TEST_F(SessionTaskTest, TaskOnlyToolIsRefusedWithoutTheExtension) {
  json error = call(1, "tools/call", {{"name", "required_tool"}}, false)["error"];
  EXPECT_EQ(error["code"], error_code::kMissingRequiredClientCapability);
  EXPECT_TRUE(error["data"]["requiredCapabilities"]["extensions"].contains(kTasksExtension));
}

TEST_F(SessionTaskTest, RemovedTaskMethodsAreMethodNotFound) {
  for (const char* method : {"tasks/result", "tasks/list"})
    EXPECT_EQ(call(1, method, {{"taskId", "x"}}, true)["error"]["code"],
              error_code::kMethodNotFound)
        << method;
}

}  // namespace
}  // namespace kiln::mcp
