// Requests kiln sends to the client in the 2025 revisions (client_requests.h): the matching of
// responses, then through a Session (the tool's CallContext::ask) and over Streamable HTTP,
// where the request goes out on the call's SSE stream and the answer comes in a POST.
// (Over stdio: stdio_transport_test.cpp.)
#include "kiln/mcp/client_requests.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "http_test_fixture.h"
#include "kiln/mcp/session.h"
#include "recording_outbox.h"
#include "test_server.h"

namespace kiln::mcp {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

const json kSampling = {{"method", "sampling/createMessage"},
                        {"params", {{"messages", json::array()}, {"maxTokens", 10}}}};
const json kCapabilities = {{"sampling", json::object()}, {"elicitation", json::object()}};

json response_to(const json& request, json result) {
  return make_result(request["id"], std::move(result));
}

Message parsed(const json& value) { return std::get<Message>(parse_message(value)); }

// ---- ClientRequests on its own ----

TEST(ClientRequests, AnAnsweredRequestGivesItsResultByKey) {
  ClientRequests requests(5s);
  std::atomic<bool> cancelled{false};
  std::vector<json> sent;
  auto answer = requests.ask(
      {{"q", kSampling}}, kCapabilities,
      [&](const json& message) {
        sent.push_back(message);
        // Answered at once: the request waits from before it is sent.
        EXPECT_TRUE(requests.deliver(parsed(response_to(message, {{"model", "m"}}))));
      },
      cancelled);
  ASSERT_TRUE(answer) << answer.error().message;
  EXPECT_EQ(*answer, json({{"q", {{"model", "m"}}}}));
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0]["method"], "sampling/createMessage");
  EXPECT_EQ(sent[0]["params"]["maxTokens"], 10);
  EXPECT_TRUE(sent[0]["id"].is_string());
}

TEST(ClientRequests, EveryRequestGetsAnIdOfItsOwn) {
  ClientRequests requests(5s);
  std::atomic<bool> cancelled{false};
  std::vector<json> ids;
  auto answer = requests.ask(
      {{"a", kSampling}, {"b", kSampling}}, kCapabilities,
      [&](const json& message) {
        ids.push_back(message["id"]);
        requests.deliver(parsed(response_to(message, {{"id", message["id"]}})));
      },
      cancelled);
  ASSERT_TRUE(answer);
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_NE(ids[0], ids[1]);
  EXPECT_EQ((*answer)["a"]["id"], ids[0]);
  EXPECT_EQ((*answer)["b"]["id"], ids[1]);
}

TEST(ClientRequests, AnErrorAnswerIsAnErrorWithTheClientsCodeAndMessage) {
  ClientRequests requests(5s);
  std::atomic<bool> cancelled{false};
  auto answer = requests.ask(
      {{"q", kSampling}}, kCapabilities,
      [&](const json& message) {
        requests.deliver(parsed(make_error_response(
            message["id"], RpcError{-1, "User rejected the sampling request", nullptr})));
      },
      cancelled);
  ASSERT_FALSE(answer);
  EXPECT_THAT(answer.error().message, HasSubstr("sampling/createMessage with error -1"));
  EXPECT_THAT(answer.error().message, HasSubstr("User rejected"));
}

TEST(ClientRequests, AClientWithoutTheCapabilityIsNeverAsked) {
  ClientRequests requests(5s);
  std::atomic<bool> cancelled{false};
  int sent = 0;
  auto answer = requests.ask(
      {{"q", kSampling}}, {{"elicitation", json::object()}}, [&](const json&) { ++sent; },
      cancelled);
  ASSERT_FALSE(answer);
  EXPECT_THAT(answer.error().message, HasSubstr("did not declare the `sampling` capability"));
  EXPECT_EQ(sent, 0);
  auto unknown = requests.ask(
      {{"q", {{"method", "tools/call"}}}}, kCapabilities, [&](const json&) { ++sent; }, cancelled);
  ASSERT_FALSE(unknown);
  EXPECT_THAT(unknown.error().message, HasSubstr("does not send to clients"));
  EXPECT_EQ(sent, 0);
}

TEST(ClientRequests, AnUnansweredRequestTimesOutAndIsCancelledAtTheClient) {
  ClientRequests requests(100ms);
  std::atomic<bool> cancelled{false};
  std::vector<json> sent;
  const auto started = std::chrono::steady_clock::now();
  auto answer = requests.ask(
      {{"q", kSampling}}, kCapabilities, [&](const json& message) { sent.push_back(message); },
      cancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 3s);
  ASSERT_FALSE(answer);
  EXPECT_THAT(answer.error().message, HasSubstr("did not answer sampling/createMessage"));
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[1]["method"], "notifications/cancelled");
  EXPECT_EQ(sent[1]["params"]["requestId"], sent[0]["id"]);
  // A late answer is not taken for another request.
  EXPECT_FALSE(requests.deliver(parsed(response_to(sent[0], json::object()))));
}

TEST(ClientRequests, CancellingTheCallEndsTheWait) {
  ClientRequests requests(60s);
  std::atomic<bool> cancelled{false};
  std::vector<json> sent;
  std::thread canceller([&] {
    std::this_thread::sleep_for(50ms);
    cancelled = true;
  });
  const auto started = std::chrono::steady_clock::now();
  auto answer = requests.ask(
      {{"q", kSampling}}, kCapabilities, [&](const json& message) { sent.push_back(message); },
      cancelled);
  canceller.join();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  ASSERT_FALSE(answer);
  EXPECT_THAT(answer.error().message, HasSubstr("cancelled"));
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[1]["method"], "notifications/cancelled");
}

TEST(ClientRequests, AResponseToNoRequestIsIgnored) {
  ClientRequests requests(1s);
  EXPECT_FALSE(requests.deliver(parsed(make_result("kiln-99", json::object()))));
}

// ---- through a Session (2025 revisions) ----

class SessionClientRequestsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto added = server->tools().add(testing::ask_client_tool());
    ASSERT_TRUE(added) << added.error().message;
  }

  void open(json capabilities, std::chrono::milliseconds timeout = 5s) {
    server->set_client_request_timeout(timeout);
    session = std::make_unique<Session>(*server, outbox);
    session->handle(json{{"jsonrpc", "2.0"},
                         {"id", "init"},
                         {"method", "initialize"},
                         {"params",
                          {{"protocolVersion", "2025-11-25"},
                           {"capabilities", std::move(capabilities)},
                           {"clientInfo", {{"name", "test"}, {"version", "1"}}}}}});
    ASSERT_TRUE(outbox.wait_reply("init"));
    session->handle(make_notification("notifications/initialized", nullptr));
  }

  void call(const json& id, const std::string& method = "sampling/createMessage") {
    session->handle(
        json{{"jsonrpc", "2.0"},
             {"id", id},
             {"method", "tools/call"},
             {"params", {{"name", "ask_client"}, {"arguments", {{"method", method}}}}}});
  }

  json result_of(const json& id) {
    auto reply = outbox.wait_reply(id);
    if (!reply || !reply->response) {
      ADD_FAILURE() << "no response to " << id.dump();
      return json();
    }
    return (*reply->response)["result"];
  }

  std::shared_ptr<testing::SlowProbe> probe = std::make_shared<testing::SlowProbe>();
  std::unique_ptr<Server> server = testing::make_test_server(probe);
  testing::RecordingOutbox outbox;
  std::unique_ptr<Session> session;
};

TEST_F(SessionClientRequestsTest, TheRequestGoesOutWithTheCallAndTheAnswerCompletesIt) {
  open(kCapabilities);
  call(7);
  auto sent = outbox.wait_note("sampling/createMessage");
  ASSERT_TRUE(sent);
  EXPECT_EQ(sent->about, 7) << "sent like the call's own notifications (HTTP: its stream)";
  EXPECT_EQ(sent->message["params"]["message"], "hi");
  session->handle(response_to(sent->message, {{"role", "assistant"}, {"model", "m"}}));
  json result = result_of(7);
  EXPECT_EQ(result["isError"], false);
  EXPECT_EQ(result["structuredContent"]["answer"]["model"], "m");
}

TEST_F(SessionClientRequestsTest, AnElicitationIsAskedTheSameWay) {
  open(kCapabilities);
  call(8, "elicitation/create");
  auto sent = outbox.wait_note("elicitation/create");
  ASSERT_TRUE(sent);
  session->handle(response_to(sent->message, {{"action", "decline"}}));
  EXPECT_EQ(result_of(8)["structuredContent"]["answer"]["action"], "decline");
}

TEST_F(SessionClientRequestsTest, TheClientsErrorAnswerIsAnErrorResult) {
  open(kCapabilities);
  call(7);
  auto sent = outbox.wait_note("sampling/createMessage");
  ASSERT_TRUE(sent);
  session->handle(make_error_response(sent->message["id"], RpcError{-1, "no model here", nullptr}));
  json result = result_of(7);
  EXPECT_EQ(result["isError"], true);
  EXPECT_THAT(result["content"][0]["text"].get<std::string>(), HasSubstr("no model here"));
}

TEST_F(SessionClientRequestsTest, AClientWithoutTheCapabilityGetsAnErrorResultAndNoRequest) {
  open(json::object());
  call(7);
  json result = result_of(7);
  EXPECT_EQ(result["isError"], true);
  EXPECT_THAT(result["content"][0]["text"].get<std::string>(),
              HasSubstr("did not declare the `sampling` capability"));
  EXPECT_FALSE(outbox.wait_note("sampling/createMessage", 50ms));
}

TEST_F(SessionClientRequestsTest, AClientThatNeverAnswersEndsTheCallAfterTheTimeout) {
  open(kCapabilities, 150ms);
  call(7);
  json result = result_of(7);
  EXPECT_EQ(result["isError"], true);
  EXPECT_THAT(result["content"][0]["text"].get<std::string>(), HasSubstr("did not answer"));
  auto cancel = outbox.wait_note("notifications/cancelled");
  ASSERT_TRUE(cancel);
  EXPECT_EQ(cancel->message["params"]["requestId"],
            outbox.wait_note("sampling/createMessage")->message["id"]);
}

TEST_F(SessionClientRequestsTest, CancellingTheCallEndsTheWaitWithoutAResponse) {
  open(kCapabilities);
  call(7);
  auto sent = outbox.wait_note("sampling/createMessage");
  ASSERT_TRUE(sent);
  session->handle(make_notification("notifications/cancelled", {{"requestId", 7}}));
  // kiln withdraws its own request from the client, and the call ends without a response.
  auto withdrawn = outbox.wait_note("notifications/cancelled");
  ASSERT_TRUE(withdrawn);
  EXPECT_EQ(withdrawn->message["params"]["requestId"], sent->message["id"]);
  session->shutdown();
  for (const auto& reply : outbox.replies_to(7)) EXPECT_FALSE(reply.response);
}

TEST_F(SessionClientRequestsTest, AStatelessCallCannotAskThisWay) {
  open(kCapabilities);
  json meta = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
               {"io.modelcontextprotocol/clientCapabilities", kCapabilities}};
  session->handle(json{{"jsonrpc", "2.0"},
                       {"id", 9},
                       {"method", "tools/call"},
                       {"params", {{"name", "ask_client"}, {"_meta", meta}}}});
  json result = result_of(9);
  EXPECT_EQ(result["isError"], true);
  EXPECT_THAT(result["content"][0]["text"].get<std::string>(), HasSubstr("input_required"));
  EXPECT_FALSE(outbox.wait_note("sampling/createMessage", 50ms));
}

// ---- over Streamable HTTP ----

class HttpClientRequestsTest : public http_test::HttpTransportTest {
 protected:
  void SetUp() override {
    auto added = server_->tools().add(testing::ask_client_tool());
    ASSERT_TRUE(added) << added.error().message;
  }

  std::string open_capable_session() {
    json init = http_test::initialize_request("2025-11-25");
    init["params"]["capabilities"] = kCapabilities;
    auto response = post(init, headers());
    if (!response || response->status != 200) {
      ADD_FAILURE() << "initialize failed";
      return "";
    }
    std::string session = response->get_header_value("Mcp-Session-Id");
    httplib::Headers h = headers();
    h.emplace("Mcp-Session-Id", session);
    h.emplace("MCP-Protocol-Version", "2025-11-25");
    post(make_notification("notifications/initialized", nullptr), h);
    return session;
  }

  httplib::Headers session_headers(const std::string& session) {
    httplib::Headers h = headers();
    h.emplace("Mcp-Session-Id", session);
    h.emplace("MCP-Protocol-Version", "2025-11-25");
    return h;
  }
};

// The call's POST streams kiln's request; the client answers in a POST of its own (202), and
// the call's stream then carries the result.
TEST_F(HttpClientRequestsTest, TheRequestGoesOutOnTheCallsStreamAndTheAnswerComesInAPost) {
  ASSERT_TRUE(start());
  std::string session = open_capable_session();
  ASSERT_FALSE(session.empty());

  std::promise<json> asked;
  std::mutex mutex;
  std::string streamed;
  bool seen = false;
  auto call = std::async(std::launch::async, [&] {
    httplib::Request request;
    request.method = "POST";
    request.path = "/mcp";
    request.headers = session_headers(session);
    request.body = http_test::tool_call(5, "ask_client").dump();
    request.set_header("Content-Type", "application/json");
    request.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
      std::lock_guard lock(mutex);
      streamed.append(data, size);
      for (const auto& event : http_test::sse_events(streamed))
        if (!seen && event.value("method", "") == "sampling/createMessage") {
          seen = true;
          asked.set_value(event);
        }
      return true;
    };
    return client()->send(request);
  });
  auto future = asked.get_future();
  ASSERT_EQ(future.wait_for(10s), std::future_status::ready) << "no request on the stream";
  json sent = future.get();
  auto answered = post(response_to(sent, {{"model", "http-model"}}), session_headers(session));
  ASSERT_TRUE(answered);
  EXPECT_EQ(answered->status, 202);

  auto finished = call.get();
  ASSERT_TRUE(finished);
  std::lock_guard lock(mutex);
  auto events = http_test::sse_events(streamed);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back()["id"], 5);
  EXPECT_EQ(events.back()["result"]["structuredContent"]["answer"]["model"], "http-model");
}

TEST_F(HttpClientRequestsTest, AClientWithoutTheCapabilityGetsAnErrorResultAsJson) {
  ASSERT_TRUE(start());
  std::string session = open_session("2025-11-25");  // declares no capabilities
  auto response = post(http_test::tool_call(5, "ask_client"), session_headers(session));
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  json body = json::parse(response->body);
  EXPECT_EQ(body["result"]["isError"], true);
  EXPECT_THAT(body["result"]["content"][0]["text"].get<std::string>(),
              HasSubstr("did not declare"));
}

}  // namespace
}  // namespace kiln::mcp
