#include "kiln/mcp/session.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "kiln/mcp/protocol_version.h"
#include "recording_outbox.h"
#include "test_server.h"

namespace kiln::mcp {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

using testing::RecordingOutbox;

json request(const json& id, const std::string& method, json params = json::object()) {
  json message{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) message["params"] = std::move(params);
  return message;
}

json notification(const std::string& method, json params = nullptr) {
  return make_notification(method, std::move(params));
}

json tool_call(const json& id, const std::string& name, json arguments = json::object(),
               json progress = nullptr) {
  json params{{"name", name}, {"arguments", std::move(arguments)}};
  if (!progress.is_null()) params["_meta"] = {{"progressToken", progress}};
  return request(id, "tools/call", std::move(params));
}

class SessionTest : public ::testing::Test {
 protected:
  // Sends `message` and returns the response to `id`; fails when there is none.
  json exchange(const json& message) {
    session->handle(message);
    auto reply = outbox.wait_reply(message["id"]);
    if (!reply) {
      ADD_FAILURE() << "no reply to " << message.dump();
      return json();
    }
    if (!reply->response) {
      ADD_FAILURE() << "the reply to " << message.dump() << " carried no response";
      return json();
    }
    return *reply->response;
  }

  json initialize(const std::string& version = "2025-06-18") {
    json response = exchange(request("init", "initialize",
                                     {{"protocolVersion", version},
                                      {"capabilities", json::object()},
                                      {"clientInfo", {{"name", "test"}, {"version", "1"}}}}));
    session->handle(notification("notifications/initialized"));
    return response;
  }

  std::shared_ptr<testing::SlowProbe> probe = std::make_shared<testing::SlowProbe>();
  std::unique_ptr<Server> server = testing::make_test_server(probe);
  RecordingOutbox outbox;
  std::unique_ptr<Session> session = std::make_unique<Session>(*server, outbox);
};

TEST_F(SessionTest, InitializeEchoesEachSupportedVersion) {
  for (std::string_view version : supported_protocol_versions()) {
    RecordingOutbox fresh_outbox;
    Session fresh(*server, fresh_outbox);
    fresh.handle(request(1, "initialize", {{"protocolVersion", std::string(version)}}));
    auto reply = fresh_outbox.wait_reply(1);
    ASSERT_TRUE(reply && reply->response);
    EXPECT_EQ((*reply->response)["result"]["protocolVersion"], std::string(version));
    EXPECT_EQ(fresh.protocol_version(), version);
  }
}

TEST_F(SessionTest, InitializeAnswersAnUnknownVersionWithTheNewest) {
  json response = initialize("2024-11-05");
  EXPECT_EQ(response["result"]["protocolVersion"], std::string(newest_protocol_version()));
  EXPECT_EQ(session->protocol_version(), newest_protocol_version());
}

// json::value("protocolVersion", "") threw on a number, out of the session: kiln mcp ended.
TEST_F(SessionTest, InitializeWithAProtocolVersionThatIsNotAStringIsInvalidParams) {
  json response = exchange(request(1, "initialize", {{"protocolVersion", 20250618}}));
  EXPECT_EQ(response["error"]["code"], error_code::kInvalidParams);
  EXPECT_THAT(response["error"]["message"].get<std::string>(), HasSubstr("as a string"));
  EXPECT_TRUE(session->protocol_version().empty());
  // Nothing was half done: the client can send it again, fixed.
  EXPECT_EQ(initialize()["result"]["protocolVersion"], "2025-06-18");
}

TEST_F(SessionTest, InitializeWithAClientInfoThatIsNotAnObjectSucceeds) {
  json response =
      exchange(request(1, "initialize", {{"protocolVersion", "2025-06-18"}, {"clientInfo", 7}}));
  EXPECT_EQ(response["result"]["protocolVersion"], "2025-06-18");
}

TEST_F(SessionTest, InitializeAdvertisesToolsResourcesPromptsAndLogging) {
  json result = initialize()["result"];
  const json& capabilities = result["capabilities"];
  EXPECT_TRUE(capabilities.contains("tools"));
  EXPECT_TRUE(capabilities.contains("resources"));
  EXPECT_TRUE(capabilities.contains("prompts"));
  EXPECT_TRUE(capabilities.contains("logging"));
  EXPECT_EQ(result["serverInfo"]["name"], "kiln-test");
  EXPECT_EQ(result["serverInfo"]["version"], "0.0.1");
  EXPECT_EQ(result["instructions"], "test server");
}

TEST_F(SessionTest, InitializedNotificationCompletesTheHandshake) {
  EXPECT_FALSE(session->initialized());
  initialize();
  EXPECT_TRUE(session->initialized());
}

TEST_F(SessionTest, SecondInitializeIsRejected) {
  initialize();
  json response = exchange(request(2, "initialize", {{"protocolVersion", "2025-03-26"}}));
  EXPECT_EQ(response["error"]["code"], error_code::kInvalidRequest);
  EXPECT_THAT(response["error"]["message"].get<std::string>(), HasSubstr("already"));
  EXPECT_EQ(session->protocol_version(), "2025-06-18");
}

TEST_F(SessionTest, RequestsBeforeInitializeAreRejected) {
  for (const char* method : {"tools/list", "resources/list", "prompts/list", "logging/setLevel"}) {
    json response = exchange(request(method, method));
    EXPECT_EQ(response["error"]["code"], error_code::kInvalidRequest) << method;
    EXPECT_THAT(response["error"]["message"].get<std::string>(), HasSubstr("initialize")) << method;
  }
  json call = exchange(tool_call("call", "echo", {{"text", "hi"}}));
  EXPECT_EQ(call["error"]["code"], error_code::kInvalidRequest);
}

TEST_F(SessionTest, PingIsAnsweredBeforeInitialize) {
  json response = exchange(request(1, "ping"));
  EXPECT_EQ(response["result"], json::object());
}

TEST_F(SessionTest, BareServerDiscoverIsRefusedAtOnceAndInitializeStillWorks) {
  session->handle(request(1, "server/discover"));
  // Answered synchronously: the reply is there when handle() returns. Without the
  // 2026-07-28 _meta the probe is invalid params; the client can fall back to initialize.
  auto replies = outbox.replies_to(1);
  ASSERT_EQ(replies.size(), 1u);
  ASSERT_TRUE(replies[0].response);
  EXPECT_EQ((*replies[0].response)["error"]["code"], error_code::kInvalidParams);
  EXPECT_EQ(initialize()["result"]["protocolVersion"], "2025-06-18");
}

TEST_F(SessionTest, UnknownMethodIsMethodNotFound) {
  initialize();
  json response = exchange(request(5, "tools/destroy"));
  EXPECT_EQ(response["error"]["code"], error_code::kMethodNotFound);
  EXPECT_THAT(response["error"]["message"].get<std::string>(), HasSubstr("tools/destroy"));
}

TEST_F(SessionTest, NotificationsGetNoReply) {
  initialize();
  size_t before = outbox.replies().size();
  session->handle(notification("notifications/roots/list_changed"));
  session->handle(notification("notifications/unknown"));
  EXPECT_EQ(outbox.replies().size(), before);
}

TEST_F(SessionTest, InvalidMessageIsInvalidRequest) {
  session->handle(json{{"jsonrpc", "1.0"}, {"id", 3}, {"method", "ping"}});
  auto reply = outbox.wait_reply(3);
  ASSERT_TRUE(reply && reply->response);
  EXPECT_EQ((*reply->response)["error"]["code"], error_code::kInvalidRequest);
}

TEST_F(SessionTest, ToolsListListsTheTools) {
  initialize();
  json tools = exchange(request(2, "tools/list"))["result"]["tools"];
  std::vector<std::string> names;
  for (const auto& tool : tools) names.push_back(tool["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"ask_name", "echo", "fail", "log", "needs_sampling",
                                             "progress", "slow", "uncancellable"}));
}

TEST_F(SessionTest, ToolCallSucceedsWithStructuredContent) {
  initialize();
  json result = exchange(tool_call(3, "echo", {{"text", "hello"}}))["result"];
  EXPECT_EQ(result["isError"], false);
  EXPECT_EQ(result["structuredContent"], json({{"text", "hello"}}));
  EXPECT_EQ(result["content"][0]["text"], "hello");
}

TEST_F(SessionTest, ToolCallOfAnUnknownToolIsInvalidParamsError) {
  initialize();
  json response = exchange(tool_call(3, "nope"));
  EXPECT_FALSE(response.contains("result"));
  EXPECT_EQ(response["error"]["code"], error_code::kInvalidParams);
  EXPECT_THAT(response["error"]["message"].get<std::string>(), HasSubstr("nope"));
}

TEST_F(SessionTest, ToolCallWithoutNameIsInvalidParamsError) {
  initialize();
  json response = exchange(request(3, "tools/call", {{"arguments", json::object()}}));
  EXPECT_EQ(response["error"]["code"], error_code::kInvalidParams);
}

TEST_F(SessionTest, ToolCallWithInvalidArgumentsIsAnErrorResult) {
  initialize();
  json response = exchange(tool_call(3, "echo", {{"text", 42}}));
  ASSERT_TRUE(response.contains("result")) << response.dump();
  EXPECT_EQ(response["result"]["isError"], true);
  EXPECT_THAT(response["result"]["content"][0]["text"].get<std::string>(),
              HasSubstr("argument `text`"));
}

TEST_F(SessionTest, ToolCallWhoseHandlerThrowsIsAnErrorResult) {
  initialize();
  json response = exchange(tool_call(3, "fail"));
  EXPECT_EQ(response["result"]["isError"], true);
}

TEST_F(SessionTest, DuplicateInFlightIdIsRejected) {
  initialize();
  session->handle(tool_call(7, "slow"));
  ASSERT_TRUE(probe->wait_started());
  session->handle(request(7, "ping"));
  auto replies = outbox.replies_to(7);
  ASSERT_EQ(replies.size(), 1u);
  ASSERT_TRUE(replies[0].response);
  EXPECT_EQ((*replies[0].response)["error"]["code"], error_code::kInvalidRequest);
  EXPECT_THAT((*replies[0].response)["error"]["message"].get<std::string>(),
              HasSubstr("already in use"));
  EXPECT_FALSE(probe->is_finished());
}

TEST_F(SessionTest, PingIsAnsweredWhileASlowToolCallRuns) {
  initialize();
  session->handle(tool_call(1, "slow"));
  ASSERT_TRUE(probe->wait_started());
  auto start = std::chrono::steady_clock::now();
  session->handle(request(2, "ping"));
  auto reply = outbox.wait_reply(2, 1s);
  ASSERT_TRUE(reply && reply->response);
  EXPECT_EQ((*reply->response)["result"], json::object());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  EXPECT_TRUE(outbox.replies_to(1).empty()) << "the slow call should still be running";
}

TEST_F(SessionTest, CancelledNotificationStopsTheSlowToolAndNoResponseIsSent) {
  initialize();
  session->handle(tool_call(3, "slow"));
  ASSERT_TRUE(probe->wait_started());
  session->handle(notification("notifications/cancelled", {{"requestId", 3}, {"reason", "user"}}));
  ASSERT_TRUE(probe->wait_finished());
  EXPECT_TRUE(probe->saw_cancel);
  session->shutdown();  // joins the worker, so a late response would be recorded by now
  auto replies = outbox.replies_to(3);
  ASSERT_EQ(replies.size(), 1u) << "the request must end exactly once";
  EXPECT_FALSE(replies[0].response.has_value()) << replies[0].response->dump();
}

TEST_F(SessionTest, CancellingAnUnknownRequestIsIgnored) {
  initialize();
  size_t before = outbox.replies().size();
  session->handle(notification("notifications/cancelled", {{"requestId", 99}}));
  session->handle(notification("notifications/cancelled", json::object()));
  EXPECT_EQ(outbox.replies().size(), before);
}

TEST_F(SessionTest, StringAndNumberIdsAreDifferentRequests) {
  initialize();
  session->handle(tool_call(5, "slow"));
  ASSERT_TRUE(probe->wait_started());
  json response = exchange(request("5", "ping"));
  EXPECT_EQ(response["result"], json::object());
}

TEST_F(SessionTest, ProgressNotificationsCarryTheTokenAndIncrease) {
  initialize();
  json response = exchange(tool_call(4, "progress", json::object(), "tok-1"));
  EXPECT_EQ(response["result"]["isError"], false);
  auto notes = outbox.notes();
  ASSERT_EQ(notes.size(), 3u) << "the repeated progress value must be dropped";
  double last = -1;
  for (const auto& note : notes) {
    EXPECT_EQ(note.message["method"], "notifications/progress");
    EXPECT_EQ(note.message["params"]["progressToken"], "tok-1");
    EXPECT_EQ(note.message["params"]["total"], 3);
    EXPECT_EQ(note.about, json(4));
    double progress = note.message["params"]["progress"].get<double>();
    EXPECT_GT(progress, last);
    last = progress;
  }
}

TEST_F(SessionTest, IntegerProgressTokenIsKept) {
  initialize();
  exchange(tool_call(4, "progress", json::object(), 17));
  auto notes = outbox.notes();
  ASSERT_FALSE(notes.empty());
  EXPECT_EQ(notes[0].message["params"]["progressToken"], 17);
}

TEST_F(SessionTest, NoProgressWithoutAToken) {
  initialize();
  exchange(tool_call(4, "progress"));
  EXPECT_TRUE(outbox.notes().empty());
}

std::vector<std::string> logged_levels(RecordingOutbox& outbox) {
  std::vector<std::string> levels;
  for (const auto& note : outbox.notes())
    if (note.message["method"] == "notifications/message")
      levels.push_back(note.message["params"]["level"]);
  return levels;
}

TEST_F(SessionTest, LogMessagesAtInfoAndAboveByDefault) {
  initialize();
  exchange(tool_call(1, "log"));
  EXPECT_EQ(logged_levels(outbox), (std::vector<std::string>{"info", "warning"}));
  ASSERT_FALSE(outbox.notes().empty());
  EXPECT_EQ(outbox.notes()[0].message["params"]["logger"], "test");
  EXPECT_EQ(outbox.notes()[0].about, json(1));
}

TEST_F(SessionTest, SetLevelFiltersLogMessages) {
  initialize();
  EXPECT_EQ(exchange(request(1, "logging/setLevel", {{"level", "warning"}}))["result"],
            json::object());
  exchange(tool_call(2, "log"));
  EXPECT_EQ(logged_levels(outbox), (std::vector<std::string>{"warning"}));

  EXPECT_EQ(exchange(request(3, "logging/setLevel", {{"level", "debug"}}))["result"],
            json::object());
  exchange(tool_call(4, "log"));
  EXPECT_EQ(logged_levels(outbox),
            (std::vector<std::string>{"warning", "debug", "info", "warning"}));
}

TEST_F(SessionTest, SetLevelRejectsAnUnknownLevel) {
  initialize();
  json response = exchange(request(1, "logging/setLevel", {{"level", "verbose"}}));
  EXPECT_EQ(response["error"]["code"], error_code::kInvalidParams);
  json missing = exchange(request(2, "logging/setLevel", json::object()));
  EXPECT_EQ(missing["error"]["code"], error_code::kInvalidParams);
}

TEST_F(SessionTest, BatchIsRejectedUnder20250618) {
  initialize("2025-06-18");
  size_t before = outbox.replies().size();
  session->handle(json::array({request(1, "ping"), request(2, "ping")}));
  auto replies = outbox.replies();
  ASSERT_EQ(replies.size(), before + 1);
  const auto& reply = replies.back();
  EXPECT_TRUE(reply.id.is_null());
  ASSERT_TRUE(reply.response);
  EXPECT_EQ((*reply.response)["error"]["code"], error_code::kInvalidRequest);
  EXPECT_THAT((*reply.response)["error"]["message"].get<std::string>(), HasSubstr("2025-06-18"));
  EXPECT_TRUE(outbox.replies_to(1).empty());
  EXPECT_TRUE(outbox.replies_to(2).empty());
}

TEST_F(SessionTest, BatchIsAcceptedUnder20250326) {
  initialize("2025-03-26");
  session->handle(json::array({request(1, "ping"), notification("notifications/roots/list_changed"),
                               request(2, "tools/list"), tool_call(3, "echo", {{"text", "x"}})}));
  for (int id : {1, 2, 3}) {
    auto reply = outbox.wait_reply(id);
    ASSERT_TRUE(reply && reply->response) << id;
    EXPECT_TRUE(reply->response->contains("result")) << reply->response->dump();
  }
}

TEST_F(SessionTest, EmptyBatchIsRejectedUnder20250326) {
  initialize("2025-03-26");
  session->handle(json::array());
  auto replies = outbox.replies();
  ASSERT_FALSE(replies.empty());
  EXPECT_TRUE(replies.back().id.is_null());
  EXPECT_EQ((*replies.back().response)["error"]["code"], error_code::kInvalidRequest);
}

TEST_F(SessionTest, BatchBeforeInitializeIsRejected) {
  session->handle(json::array({request(1, "initialize", {{"protocolVersion", "2025-03-26"}})}));
  auto replies = outbox.replies();
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ((*replies[0].response)["error"]["code"], error_code::kInvalidRequest);
  EXPECT_FALSE(session->initialized());
}

TEST_F(SessionTest, ResourcesReadReturnsTheContents) {
  initialize();
  json result = exchange(request(1, "resources/read", {{"uri", "kiln://zoo/a/b.cu"}}))["result"];
  EXPECT_EQ(result["contents"][0]["text"], "a/b.cu");
  EXPECT_EQ(exchange(request(2, "resources/templates/list"))["result"]["resourceTemplates"].size(),
            1u);
  EXPECT_EQ(exchange(request(3, "resources/list"))["result"]["resources"].size(), 1u);
}

TEST_F(SessionTest, ResourcesReadOfAnUnknownUriIsResourceNotFound) {
  initialize();
  json response = exchange(request(1, "resources/read", {{"uri", "kiln://nothing"}}));
  EXPECT_EQ(response["error"]["code"], error_code::kResourceNotFound);
  EXPECT_EQ(response["error"]["code"], -32002);
  EXPECT_EQ(response["error"]["data"]["uri"], "kiln://nothing");
}

TEST_F(SessionTest, ResourcesReadWithoutUriIsInvalidParams) {
  initialize();
  EXPECT_EQ(exchange(request(1, "resources/read"))["error"]["code"], error_code::kInvalidParams);
}

TEST_F(SessionTest, PromptsGetRendersThePrompt) {
  initialize();
  json result = exchange(request(
      1, "prompts/get", {{"name", "optimize"}, {"arguments", {{"goal", "speed"}}}}))["result"];
  EXPECT_EQ(result["messages"][0]["content"]["text"], "optimize for speed");
}

TEST_F(SessionTest, PromptsGetWithAMissingRequiredArgumentIsInvalidParams) {
  initialize();
  json response = exchange(request(1, "prompts/get", {{"name", "optimize"}}));
  EXPECT_EQ(response["error"]["code"], error_code::kInvalidParams);
  EXPECT_THAT(response["error"]["message"].get<std::string>(), HasSubstr("`goal`"));
}

TEST_F(SessionTest, ParamsThatAreAnArrayAreInvalidParams) {
  initialize();
  EXPECT_EQ(exchange(request(1, "prompts/get", json::array({"optimize"})))["error"]["code"],
            error_code::kInvalidParams);
}

TEST_F(SessionTest, ShutdownCancelsToolCallsInFlight) {
  initialize();
  session->handle(tool_call(1, "slow"));
  ASSERT_TRUE(probe->wait_started());
  session->shutdown();
  EXPECT_TRUE(probe->is_finished());
  EXPECT_TRUE(probe->saw_cancel);
}

// Outbox::respond is "called exactly once per request": a transport waiting
// for a request (an HTTP stream) must learn that it ended, even at shutdown.
TEST_F(SessionTest, ShutdownEndsEveryRequestInFlightExactlyOnce) {
  initialize();
  session->handle(tool_call(1, "slow"));
  ASSERT_TRUE(probe->wait_started());
  session->shutdown();
  auto replies = outbox.replies_to(1);
  ASSERT_EQ(replies.size(), 1u) << "the outbox never heard that request 1 ended";
  EXPECT_FALSE(replies[0].response.has_value());
}

// ---- protocol revision 2026-07-28: stateless requests beside the initialize era ----

json stateless_meta(json capabilities = json::object()) {
  return json{{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
              {"io.modelcontextprotocol/clientInfo", {{"name", "test"}, {"version", "1"}}},
              {"io.modelcontextprotocol/clientCapabilities", std::move(capabilities)}};
}

json stateless(const json& id, const std::string& method, json params = json::object(),
               json meta = stateless_meta()) {
  params["_meta"] = std::move(meta);
  return request(id, method, std::move(params));
}

TEST_F(SessionTest, DiscoverIsAnsweredWithoutInitialize) {
  json result = exchange(stateless(1, "server/discover"))["result"];
  EXPECT_EQ(result["supportedVersions"], json::array({"2026-07-28"}));
  EXPECT_TRUE(result["capabilities"].contains("completions"));
  EXPECT_TRUE(result["capabilities"].contains("tools"));
  EXPECT_EQ(result["resultType"], "complete");
  EXPECT_EQ(result["ttlMs"], 0);
  EXPECT_EQ(result["cacheScope"], "private");
  EXPECT_EQ(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "kiln-test");
  EXPECT_FALSE(session->initialized());
}

TEST_F(SessionTest, StatelessRequestWithoutRequiredMetaIsInvalidParams) {
  json no_meta = exchange(request(1, "server/discover"));
  EXPECT_EQ(no_meta["error"]["code"], error_code::kInvalidParams);
  json meta = stateless_meta();
  meta.erase("io.modelcontextprotocol/clientCapabilities");
  json no_capabilities = exchange(stateless(2, "tools/list", json::object(), meta));
  EXPECT_EQ(no_capabilities["error"]["code"], error_code::kInvalidParams);
  EXPECT_THAT(no_capabilities["error"]["message"].get<std::string>(),
              HasSubstr("clientCapabilities"));
  meta = stateless_meta();
  meta.erase("io.modelcontextprotocol/clientInfo");
  EXPECT_TRUE(exchange(stateless(3, "tools/list", json::object(), meta)).contains("result"));
}

TEST_F(SessionTest, StatelessRequestForAnUnknownRevisionListsTheSupportedOnes) {
  json meta = stateless_meta();
  meta["io.modelcontextprotocol/protocolVersion"] = "2099-01-01";
  json error = exchange(stateless(1, "server/discover", json::object(), meta))["error"];
  EXPECT_EQ(error["code"], error_code::kUnsupportedProtocolVersion);
  EXPECT_EQ(error["data"]["supported"], json::array({"2026-07-28"}));
  EXPECT_EQ(error["data"]["requested"], "2099-01-01");
}

TEST_F(SessionTest, StatelessToolCallNeedsNoInitializeAndCarriesResultType) {
  json result = exchange(
      stateless(1, "tools/call", {{"name", "echo"}, {"arguments", {{"text", "hi"}}}}))["result"];
  EXPECT_EQ(result["resultType"], "complete");
  EXPECT_EQ(result["structuredContent"], json({{"text", "hi"}}));
  EXPECT_FALSE(result.contains("ttlMs")) << "tools/call results are not cacheable";
}

TEST_F(SessionTest, ListsCarryCachingHintsOnlyInTheStatelessRevision) {
  for (const char* method :
       {"tools/list", "prompts/list", "resources/list", "resources/templates/list"}) {
    json result = exchange(stateless(method, method))["result"];
    EXPECT_EQ(result["ttlMs"], 0) << method;
    EXPECT_EQ(result["cacheScope"], "private") << method;
  }
  initialize();
  json legacy = exchange(request(9, "tools/list"))["result"];
  EXPECT_FALSE(legacy.contains("resultType"));
  EXPECT_FALSE(legacy.contains("ttlMs"));
}

TEST_F(SessionTest, MethodsTheStatelessRevisionRemovedAreMethodNotFound) {
  for (const char* method : {"initialize", "ping", "logging/setLevel", "resources/subscribe",
                             "subscriptions/listen", "no/such"}) {
    json error = exchange(stateless(method, method))["error"];
    EXPECT_EQ(error["code"], error_code::kMethodNotFound) << method;
  }
  EXPECT_TRUE(session->protocol_version().empty()) << "a stateless initialize opens nothing";
}

TEST_F(SessionTest, StatelessToolCallLogsOnlyAtTheRequestsOwnLevel) {
  exchange(stateless(1, "tools/call", {{"name", "log"}}));
  EXPECT_TRUE(outbox.notes().empty()) << "no logLevel in _meta: no notifications/message";
  json meta = stateless_meta();
  meta["io.modelcontextprotocol/logLevel"] = "warning";
  exchange(stateless(2, "tools/call", {{"name", "log"}}, meta));
  auto notes = outbox.notes();
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].message["params"]["level"], "warning");
  EXPECT_EQ(notes[0].about, 2);
}

TEST_F(SessionTest, InitializeEraSessionKeepsWorkingBesideStatelessRequests) {
  initialize("2025-11-25");
  exchange(stateless(1, "server/discover"));
  json result = exchange(tool_call(2, "echo", {{"text", "legacy"}}))["result"];
  EXPECT_EQ(result["structuredContent"], json({{"text", "legacy"}}));
  EXPECT_FALSE(result.contains("resultType"));
  EXPECT_EQ(session->protocol_version(), "2025-11-25");
}

TEST_F(SessionTest, ToolNeedingAnUndeclaredClientCapabilityIsRefusedInBothEras) {
  json error = exchange(stateless(1, "tools/call", {{"name", "needs_sampling"}}))["error"];
  EXPECT_EQ(error["code"], error_code::kMissingRequiredClientCapability);
  EXPECT_TRUE(error["data"]["requiredCapabilities"]["sampling"].is_object());
  json declared = exchange(stateless(2, "tools/call", {{"name", "needs_sampling"}},
                                     stateless_meta({{"sampling", json::object()}})));
  EXPECT_TRUE(declared.contains("result")) << declared.dump();
  initialize();
  EXPECT_EQ(exchange(tool_call(3, "needs_sampling"))["error"]["code"],
            error_code::kMissingRequiredClientCapability);
}

TEST_F(SessionTest, InputRequiredResultRoundTripsSealedRequestState) {
  json first = exchange(stateless(1, "tools/call", {{"name", "ask_name"}}))["result"];
  ASSERT_EQ(first["resultType"], "input_required") << first.dump();
  EXPECT_EQ(first["inputRequests"]["name"]["method"], "elicitation/create");
  std::string state = first["requestState"];
  EXPECT_NE(state, "asked") << "the state leaves sealed";
  json answers{{"name", {{"action", "accept"}, {"content", {{"name", "Ada"}}}}}};
  json second = exchange(stateless(
      2, "tools/call",
      {{"name", "ask_name"}, {"inputResponses", answers}, {"requestState", state}}))["result"];
  EXPECT_EQ(second["resultType"], "complete");
  EXPECT_EQ(second["content"][0]["text"], "hello Ada");
  json tampered = exchange(stateless(
      3, "tools/call",
      {{"name", "ask_name"}, {"inputResponses", answers}, {"requestState", state + "x"}}));
  EXPECT_EQ(tampered["error"]["code"], error_code::kInvalidParams);
}

TEST_F(SessionTest, InputRequiredToolFailsPlainlyInTheInitializeEra) {
  initialize();
  json result = exchange(tool_call(2, "ask_name"))["result"];
  EXPECT_EQ(result["isError"], true);
  EXPECT_THAT(result["content"][0]["text"].get<std::string>(), HasSubstr("2026-07-28"));
}

TEST_F(SessionTest, CompletionCompletesPromptArgumentsAndTemplateVariablesInBothEras) {
  json prompt = exchange(stateless(1, "completion/complete",
                                   {{"ref", {{"type", "ref/prompt"}, {"name", "optimize"}}},
                                    {"argument", {{"name", "goal"}, {"value", "la"}}}}))["result"];
  EXPECT_EQ(prompt["completion"]["values"], json::array({"latency", "lanes"}));
  EXPECT_EQ(prompt["completion"]["total"], 2);
  EXPECT_EQ(prompt["completion"]["hasMore"], false);
  initialize();
  json ids =
      exchange(request(2, "completion/complete",
                       {{"ref", {{"type", "ref/resource"}, {"uri", "kiln://zoo/{id}/{file}"}}},
                        {"argument", {{"name", "id"}, {"value", "gemm"}}}}))["result"];
  EXPECT_EQ(ids["completion"]["values"], json::array({"gemm_a", "gemm_b"}));
  json files =
      exchange(request(3, "completion/complete",
                       {{"ref", {{"type", "ref/resource"}, {"uri", "kiln://zoo/{id}/{file}"}}},
                        {"argument", {{"name", "file"}, {"value", ""}}},
                        {"context", {{"arguments", {{"id", "softmax"}}}}}}))["result"];
  EXPECT_EQ(files["completion"]["values"], json::array({"kernel.cu"}));
  json unknown = exchange(request(4, "completion/complete",
                                  {{"ref", {{"type", "ref/prompt"}, {"name", "nope"}}},
                                   {"argument", {{"name", "goal"}, {"value", ""}}}}));
  EXPECT_EQ(unknown["error"]["code"], error_code::kInvalidParams);
}

TEST_F(SessionTest, InitializeDeclaresCompletions) {
  EXPECT_TRUE(initialize()["result"]["capabilities"].contains("completions"));
}

TEST_F(SessionTest, UnknownResourceCodeFollowsTheRevision) {
  json stateless_error =
      exchange(stateless(1, "resources/read", {{"uri", "kiln://nope"}}))["error"];
  EXPECT_EQ(stateless_error["code"], error_code::kInvalidParams);
  EXPECT_EQ(stateless_error["data"]["uri"], "kiln://nope");
  initialize();
  json legacy = exchange(request(2, "resources/read", {{"uri", "kiln://nope"}}))["error"];
  EXPECT_EQ(legacy["code"], error_code::kResourceNotFound);
}

}  // namespace
}  // namespace kiln::mcp
