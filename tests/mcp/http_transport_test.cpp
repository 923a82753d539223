#include "kiln/mcp/http_transport.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <sstream>
#include <thread>

#include "http_test_fixture.h"
#include "kiln/mcp/json_rpc.h"

namespace kiln::mcp {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using namespace http_test;

TEST_F(HttpTransportTest, InitializeReturnsASessionIdHeader) {
  ASSERT_TRUE(start());
  auto response = post(initialize_request(), headers());
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  std::string session = response->get_header_value("Mcp-Session-Id");
  EXPECT_GE(session.size(), 16u);
  for (char c : session) EXPECT_TRUE(c > 0x20 && c < 0x7f) << "session ids are visible ASCII";
  EXPECT_THAT(response->get_header_value("Content-Type"), StartsWith("application/json"));
  json body = json::parse(response->body);
  EXPECT_EQ(body["id"], 0);
  EXPECT_EQ(body["result"]["protocolVersion"], kVersion);
}

TEST_F(HttpTransportTest, EachInitializeGetsItsOwnSession) {
  ASSERT_TRUE(start());
  std::string first = open_session();
  std::string second = open_session();
  EXPECT_NE(first, second);
  auto response = post(request(1, "tools/list"), headers(first));
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
}

TEST_F(HttpTransportTest, RequestWithoutSessionIdIsBadRequest) {
  ASSERT_TRUE(start());
  open_session();
  // Named as a 2025 client: the session is missing.
  httplib::Headers h = headers();
  h.emplace("MCP-Protocol-Version", kVersion);
  auto response = post(request(1, "tools/list"), h);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 400);
  EXPECT_THAT(response->body, HasSubstr("Mcp-Session-Id"));
  // Named as no revision: read as a stateless request, which lacks its _meta.
  auto bare = post(request(2, "tools/list"), headers());
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->status, 400);
  EXPECT_EQ(json::parse(bare->body)["error"]["code"], error_code::kInvalidParams);
  EXPECT_THAT(bare->body, HasSubstr("initialize"));
}

TEST_F(HttpTransportTest, UnknownSessionIsNotFound) {
  ASSERT_TRUE(start());
  auto response = post(request(1, "tools/list"), headers("0123456789abcdef0123456789abcdef"));
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 404);
  EXPECT_THAT(response->body, HasSubstr("initialize a new session"));
}

TEST_F(HttpTransportTest, DeleteEndsTheSessionAndLaterRequestsAreNotFound) {
  ASSERT_TRUE(start());
  std::string session = open_session();
  auto removed = client()->Delete("/mcp", headers(session));
  ASSERT_TRUE(removed);
  EXPECT_EQ(removed->status, 200);
  auto response = post(request(1, "ping"), headers(session));
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 404);
  auto again = client()->Delete("/mcp", headers(session));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 404);
}

TEST_F(HttpTransportTest, DeleteWithoutSessionIdIsBadRequest) {
  ASSERT_TRUE(start());
  auto removed = client()->Delete("/mcp", headers());
  ASSERT_TRUE(removed);
  EXPECT_EQ(removed->status, 400);
}

TEST_F(HttpTransportTest, ForeignOriginIsForbidden) {
  ASSERT_TRUE(start());
  httplib::Headers h = headers();
  h.emplace("Origin", "http://evil.example");
  auto response = post(initialize_request(), h);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 403);
  EXPECT_FALSE(response->has_header("Mcp-Session-Id"));
}

TEST_F(HttpTransportTest, LoopbackOriginIsAllowed) {
  ASSERT_TRUE(start());
  httplib::Headers h = headers();
  h.emplace("Origin", "http://localhost:6274");
  auto response = post(initialize_request(), h);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
}

TEST_F(HttpTransportTest, AllowListedOriginIsAllowed) {
  HttpOptions options;
  options.guard.allowed_origins = {"https://inspector.example"};
  ASSERT_TRUE(start(options));
  httplib::Headers h = headers();
  h.emplace("Origin", "https://inspector.example");
  auto response = post(initialize_request(), h);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
}

// The refusal quotes the header; its bytes are not UTF-8, and writing the reply threw (a 500).
TEST_F(HttpTransportTest, ForeignOriginThatIsNotUtf8IsForbiddenWithAJsonReply) {
  ASSERT_TRUE(start());
  httplib::Headers h = headers();
  h.emplace("Origin", "http://\xff\xfe.example");
  auto response = post(initialize_request(), h);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 403);
  json body = json::parse(response->body, nullptr, false);
  ASSERT_FALSE(body.is_discarded()) << response->body;
  EXPECT_NE(body["error"]["message"].get<std::string>().find("is not allowed"), std::string::npos);
}

TEST_F(HttpTransportTest, NonLoopbackHostHeaderIsForbidden) {
  ASSERT_TRUE(start());
  httplib::Headers h = headers();
  h.emplace("Host", "rebound.evil.example:8765");
  auto response = post(initialize_request(), h);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 403);
}

TEST_F(HttpTransportTest, UnsupportedProtocolVersionHeaderIsBadRequest) {
  ASSERT_TRUE(start());
  std::string session = open_session();
  httplib::Headers h{{"Accept", "application/json, text/event-stream"},
                     {"Mcp-Session-Id", session},
                     {"MCP-Protocol-Version", "1999-01-01"}};
  auto response = post(request(1, "ping"), h);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 400);
  EXPECT_THAT(response->body, HasSubstr("MCP-Protocol-Version"));
}

TEST_F(HttpTransportTest, ProtocolVersionHeaderOtherThanTheNegotiatedOneIsBadRequest) {
  ASSERT_TRUE(start());
  std::string session = open_session("2025-06-18");
  httplib::Headers h{{"Accept", "application/json, text/event-stream"},
                     {"Mcp-Session-Id", session},
                     {"MCP-Protocol-Version", "2025-03-26"}};
  auto response = post(request(1, "ping"), h);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 400);
}

TEST_F(HttpTransportTest, MissingProtocolVersionHeaderIsAccepted) {
  ASSERT_TRUE(start());
  std::string session = open_session();
  httplib::Headers h{{"Accept", "application/json, text/event-stream"},
                     {"Mcp-Session-Id", session}};
  auto response = post(request(1, "ping"), h);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
}

TEST_F(HttpTransportTest, GetIsMethodNotAllowed) {
  ASSERT_TRUE(start());
  auto response = client()->Get("/mcp", headers());
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 405);
  EXPECT_THAT(response->get_header_value("Allow"), HasSubstr("POST"));
}

TEST_F(HttpTransportTest, OtherPathsAreNotFound) {
  ASSERT_TRUE(start());
  auto response =
      client()->Post("/other", headers(), initialize_request().dump(), "application/json");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 404);
  EXPECT_THAT(response->body, HasSubstr("/mcp"));
}

TEST_F(HttpTransportTest, NotificationOnlyPostIsAccepted) {
  ASSERT_TRUE(start());
  std::string session = open_session();
  auto response =
      post(make_notification("notifications/roots/list_changed", nullptr), headers(session));
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 202);
  EXPECT_TRUE(response->body.empty());
}

TEST_F(HttpTransportTest, MalformedJsonBodyIsBadRequestWithParseError) {
  ASSERT_TRUE(start());
  auto response =
      client()->Post("/mcp", headers(), "{\"jsonrpc\": \"2.0\", oops", "application/json");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 400);
  json body = json::parse(response->body, nullptr, false);
  ASSERT_FALSE(body.is_discarded()) << response->body;
  EXPECT_EQ(body["error"]["code"], error_code::kParseError);
  EXPECT_TRUE(body["id"].is_null());
}

TEST_F(HttpTransportTest, DeeplyNestedBodyIsBadRequestAndTheServerStillAnswers) {
  ASSERT_TRUE(start());
  const std::string deep = R"({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": )" +
                           std::string(300000, '[') + std::string(300000, ']') + "}";
  auto response = client()->Post("/mcp", headers(), deep, "application/json");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 400);
  json body = json::parse(response->body, nullptr, false);
  ASSERT_FALSE(body.is_discarded()) << response->body;
  EXPECT_EQ(body["error"]["code"], error_code::kParseError);
  auto again = post(initialize_request(), headers());
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200);
}

// Deciding whether a POST opens a session read "method" with value(), which threw (a 500).
TEST_F(HttpTransportTest, MethodThatIsNotAStringWithoutASessionIsBadRequest) {
  ASSERT_TRUE(start());
  auto response = client()->Post("/mcp", headers(), R"({"jsonrpc": "2.0", "id": 1, "method": 5})",
                                 "application/json");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 400);
  json body = json::parse(response->body, nullptr, false);
  ASSERT_FALSE(body.is_discarded()) << response->body;
  EXPECT_TRUE(body.contains("error")) << response->body;
}

TEST_F(HttpTransportTest, InvalidMessageInASessionIsBadRequestWithTheRejection) {
  ASSERT_TRUE(start());
  std::string session = open_session();
  auto response = post(json{{"jsonrpc", "1.0"}, {"id", 5}, {"method", "ping"}}, headers(session));
  ASSERT_TRUE(response);
  json body = json::parse(response->body, nullptr, false);
  EXPECT_EQ(body["error"]["code"], error_code::kInvalidRequest) << response->body;
}

TEST_F(HttpTransportTest, OversizedBodyIsPayloadTooLargeAndTheServerStillAnswers) {
  HttpOptions options;
  options.max_request_bytes = 1024;
  ASSERT_TRUE(start(options));
  json big = request(1, "initialize", {{"padding", std::string(8192, 'x')}});
  auto response = post(big, headers());
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 413);
  std::string session = open_session();
  EXPECT_FALSE(session.empty());
  auto pong = post(request(2, "ping"), headers(session));
  ASSERT_TRUE(pong);
  EXPECT_EQ(pong->status, 200);
}

TEST_F(HttpTransportTest, ToolCallWithProgressIsAnEventStreamWithProgressBeforeTheResponse) {
  ASSERT_TRUE(start());
  std::string session = open_session();
  auto response = post(tool_call(7, "progress", json::object(), "tok"), headers(session));
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_THAT(response->get_header_value("Content-Type"), StartsWith("text/event-stream"));
  std::vector<json> events = sse_events(response->body);
  ASSERT_EQ(events.size(), 4u) << response->body;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(events[i]["method"], "notifications/progress") << events[i].dump();
    EXPECT_EQ(events[i]["params"]["progressToken"], "tok");
    EXPECT_EQ(events[i]["params"]["progress"], i + 1);
  }
  EXPECT_EQ(events[3]["id"], 7);
  EXPECT_EQ(events[3]["result"]["isError"], false);
}

TEST_F(HttpTransportTest, ToolCallWithoutNotificationsIsJson) {
  ASSERT_TRUE(start());
  std::string session = open_session();
  auto response = post(tool_call(8, "echo", {{"text", "hi"}}), headers(session));
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_THAT(response->get_header_value("Content-Type"), StartsWith("application/json"));
  json body = json::parse(response->body);
  EXPECT_EQ(body["id"], 8);
  EXPECT_EQ(body["result"]["structuredContent"]["text"], "hi");
}

TEST_F(HttpTransportTest, ProgressIsDroppedWhenTheClientAcceptsOnlyJson) {
  ASSERT_TRUE(start());
  std::string session = open_session();
  httplib::Headers h = headers(session, "application/json");
  auto response = post(tool_call(9, "progress", json::object(), "tok"), h);
  ASSERT_TRUE(response);
  EXPECT_THAT(response->get_header_value("Content-Type"), StartsWith("application/json"));
  EXPECT_EQ(json::parse(response->body)["id"], 9);
}

TEST_F(HttpTransportTest, PingIsAnsweredWhileASlowToolCallRuns) {
  ASSERT_TRUE(start());
  std::string session = open_session();
  auto slow = std::async(std::launch::async, [&] {
    return post(tool_call(1, "slow", {{"max_ms", 1500}}), headers(session));
  });
  ASSERT_TRUE(probe_->wait_started());
  auto started = std::chrono::steady_clock::now();
  auto pong = post(request(2, "ping"), headers(session));
  ASSERT_TRUE(pong);
  EXPECT_EQ(pong->status, 200);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1s);
  EXPECT_FALSE(probe_->is_finished());
  ASSERT_EQ(slow.wait_for(10s), std::future_status::ready);
}

TEST_F(HttpTransportTest, CancelledToolCallEndsItsPostWithoutAResponse) {
  ASSERT_TRUE(start());
  std::string session = open_session();
  auto slow = std::async(std::launch::async, [&] {
    return post(tool_call(1, "slow", {{"max_ms", 10000}}), headers(session, "application/json"));
  });
  ASSERT_TRUE(probe_->wait_started());
  auto cancel =
      post(make_notification("notifications/cancelled", {{"requestId", 1}}), headers(session));
  ASSERT_TRUE(cancel);
  EXPECT_EQ(cancel->status, 202);
  ASSERT_EQ(slow.wait_for(5s), std::future_status::ready);
  auto response = slow.get();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 202);
  EXPECT_TRUE(response->body.empty()) << response->body;
  EXPECT_TRUE(probe_->wait_finished());
}

// Ending a session (DELETE, eviction, shutdown) cancels its calls; a stream
// open for one of them must then end, or the client and stop() wait forever.
TEST_F(HttpTransportTest, DeletingASessionEndsItsOpenStream) {
  ASSERT_TRUE(start());
  std::string session = open_session();
  auto streaming = std::async(std::launch::async, [&] {
    auto c = client();
    c->set_read_timeout(3);
    return c->Post("/mcp", headers(session),
                   tool_call(1, "slow", {{"max_ms", 10000}}, "tok").dump(), "application/json");
  });
  ASSERT_TRUE(probe_->wait_started());
  auto removed = client()->Delete("/mcp", headers(session));
  ASSERT_TRUE(removed);
  EXPECT_EQ(removed->status, 200);
  EXPECT_TRUE(probe_->wait_finished()) << "ending the session should cancel its calls";
  ASSERT_EQ(streaming.wait_for(10s), std::future_status::ready);
  auto response = streaming.get();
  bool ended = response && response.error() == httplib::Error::Success;
  EXPECT_TRUE(ended) << "the stream stayed open after its session ended: "
                     << (response ? "" : httplib::to_string(response.error()));
  if (!ended) {
    // A server thread is stuck in that stream and stop() would wait for it
    // forever; leave the transport running rather than hang the suite.
    (void)transport_.release();
    serving_.detach();
  }
}

// A notification for a request whose stream has ended (here: progress from a
// call that ignores its cancellation) must not leak into another POST's reply.
TEST_F(HttpTransportTest, NotificationsOfAFinishedRequestDoNotLeakIntoOtherPosts) {
  ASSERT_TRUE(start());
  std::string session = open_session();
  auto uncancellable = std::async(std::launch::async, [&] {
    return post(tool_call(1, "uncancellable", {{"ms", 1500}}, "tok"), headers(session));
  });
  std::this_thread::sleep_for(50ms);
  auto cancel =
      post(make_notification("notifications/cancelled", {{"requestId", 1}}), headers(session));
  ASSERT_TRUE(cancel);
  EXPECT_TRUE(cancel->body.empty()) << "the cancellation POST carried: " << cancel->body;
  int leaked = 0;
  auto deadline = std::chrono::steady_clock::now() + 1s;
  for (int id = 100; std::chrono::steady_clock::now() < deadline; ++id) {
    auto pong = post(request(id, "ping"), headers(session));
    ASSERT_TRUE(pong);
    if (pong->get_header_value("Content-Type").rfind("text/event-stream", 0) != 0) continue;
    for (const json& event : sse_events(pong->body))
      if (event.value("method", "") == "notifications/progress") ++leaked;
  }
  EXPECT_EQ(leaked, 0) << "ping replies carried progress notifications of the cancelled request 1";
  ASSERT_EQ(uncancellable.wait_for(10s), std::future_status::ready);
}

TEST_F(HttpTransportTest, BatchIsBadRequestUnder20250618) {
  ASSERT_TRUE(start());
  std::string session = open_session("2025-06-18");
  auto response = post(json::array({request(1, "ping"), request(2, "ping")}), headers(session));
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 400);
  EXPECT_THAT(response->body, HasSubstr("batches"));
}

TEST_F(HttpTransportTest, BatchIsAnsweredWithAnArrayUnder20250326) {
  ASSERT_TRUE(start());
  std::string session = open_session("2025-03-26");
  httplib::Headers h{{"Accept", "application/json, text/event-stream"},
                     {"Mcp-Session-Id", session},
                     {"MCP-Protocol-Version", "2025-03-26"}};
  auto response = post(json::array({request(1, "ping"), request(2, "tools/list")}), h);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  json body = json::parse(response->body);
  ASSERT_TRUE(body.is_array()) << response->body;
  EXPECT_EQ(body.size(), 2u);
}

TEST_F(HttpTransportTest, BearerTokenIsEnforcedWhenConfigured) {
  HttpOptions options;
  options.guard.bearer_token = "a-long-test-token-0123456789";
  ASSERT_TRUE(start(options));

  auto missing = post(initialize_request(), headers());
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 401);
  EXPECT_THAT(missing->get_header_value("WWW-Authenticate"), HasSubstr("Bearer"));

  httplib::Headers wrong = headers();
  wrong.emplace("Authorization", "Bearer not-the-token");
  auto refused = post(initialize_request(), wrong);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);

  std::string session =
      open_session(kVersion, {{"Authorization", "Bearer a-long-test-token-0123456789"}});
  EXPECT_FALSE(session.empty());
  httplib::Headers in_session = headers(session);
  auto without_token = post(request(1, "ping"), in_session);
  ASSERT_TRUE(without_token);
  EXPECT_EQ(without_token->status, 401) << "every request needs the token, not only initialize";
}

TEST_F(HttpTransportTest, BindingANonLoopbackAddressWithoutATokenFails) {
  for (const char* host : {"10.0.0.1", "0.0.0.0"}) {
    HttpOptions options;
    options.host = host;
    options.port = 0;
    HttpTransport transport(*server_, options);
    auto bound = transport.bind();
    ASSERT_FALSE(bound.ok()) << host;
    EXPECT_THAT(bound.error().message, HasSubstr("token")) << host;
    EXPECT_THAT(bound.error().message, HasSubstr(host));
  }
}

// ::1 is the IPv6 loopback address: it needs no token, like 127.0.0.1.
TEST_F(HttpTransportTest, BindingTheIpv6LoopbackNeedsNoToken) {
  HttpOptions options;
  options.host = "::1";
  options.port = 0;
  HttpTransport transport(*server_, options);
  auto bound = transport.bind();
  if (!bound) {
    EXPECT_THAT(bound.error().message, ::testing::Not(HasSubstr("token")));
  }
}

TEST_F(HttpTransportTest, GarbageOnARawSocketDoesNotBringTheServerDown) {
  ASSERT_TRUE(start());
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  timeval timeout{2, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port_));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  const char garbage[] =
      "\x16\x03\x01\x02\x00\x01\x00\xff\xfe GARBAGE /// \r\n\x00\x01\r\n\r\nPOST /mcp "
      "HTTP/9\r\n\r\n";
  ASSERT_GT(send(fd, garbage, sizeof garbage - 1, MSG_NOSIGNAL), 0);
  char reply[512];
  (void)recv(fd, reply, sizeof reply, 0);  // whatever it answers, if anything
  close(fd);

  std::string session = open_session();
  EXPECT_FALSE(session.empty());
  auto pong = post(request(1, "ping"), headers(session));
  ASSERT_TRUE(pong);
  EXPECT_EQ(pong->status, 200);
}

}  // namespace
}  // namespace kiln::mcp
