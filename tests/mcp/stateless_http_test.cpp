#include "kiln/mcp/stateless_http.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "http_test_fixture.h"

namespace kiln::mcp {
namespace {

Message call(const std::string& name, const std::string& version = "2026-07-28") {
  Message m;
  m.id = 7;
  m.method = "tools/call";
  m.params = {{"name", name},
              {"_meta",
               {{"io.modelcontextprotocol/protocolVersion", version},
                {"io.modelcontextprotocol/clientCapabilities", json::object()}}}};
  return m;
}

HeaderLookup headers(std::map<std::string, std::string> values) {
  return [values](const char* name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

int code_of(const Message& m, const HeaderLookup& h) {
  try {
    check_stateless_post(m, h);
  } catch (const RpcFailure& failure) {
    return failure.error.code;
  }
  return 0;
}

const std::map<std::string, std::string> kGood{
    {"MCP-Protocol-Version", "2026-07-28"}, {"Mcp-Method", "tools/call"}, {"Mcp-Name", "echo"}};

TEST(StatelessHttpTest, AcceptsHeadersThatMirrorTheBody) {
  EXPECT_EQ(code_of(call("echo"), headers(kGood)), 0);
}

TEST(StatelessHttpTest, EachMissingOrDifferentHeaderIsAMismatch) {
  for (const char* header : {"MCP-Protocol-Version", "Mcp-Method", "Mcp-Name"}) {
    auto missing = kGood;
    missing.erase(header);
    EXPECT_EQ(code_of(call("echo"), headers(missing)), error_code::kHeaderMismatch) << header;
    auto wrong = kGood;
    wrong[header] = "other";
    EXPECT_EQ(code_of(call("echo"), headers(wrong)), error_code::kHeaderMismatch) << header;
  }
}

TEST(StatelessHttpTest, VersionHeaderAgainstAnUnknownBodyVersionIsAMismatchFirst) {
  EXPECT_EQ(code_of(call("echo", "v9"), headers(kGood)), error_code::kHeaderMismatch);
  auto same = kGood;
  same["MCP-Protocol-Version"] = "v9";
  EXPECT_EQ(code_of(call("echo", "v9"), headers(same)), error_code::kUnsupportedProtocolVersion);
}

TEST(StatelessHttpTest, DecodesTheBase64Sentinel) {
  EXPECT_EQ(decode_header_value("plain"), "plain");
  EXPECT_EQ(decode_header_value("=?base64?SGVsbG8sIOS4lueVjA==?="),
            "Hello, \xe4\xb8\x96\xe7\x95\x8c");
  EXPECT_EQ(decode_header_value("=?base64?IHBhZGRlZCA=?="), " padded ");
  EXPECT_FALSE(decode_header_value("=?base64?not*base64?="));
  auto encoded = kGood;
  encoded["Mcp-Name"] = "=?base64?ZWNobw==?=";
  EXPECT_EQ(code_of(call("echo"), headers(encoded)), 0);
}

}  // namespace

// ---- the stateless POSTs of 2026-07-28 beside the sessions, through HttpTransport ----

namespace {

using ::testing::StartsWith;
using namespace http_test;

json stateless_request(const json& id, const std::string& method, json params = json::object()) {
  params["_meta"] = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                     {"io.modelcontextprotocol/clientCapabilities", json::object()}};
  return request(id, method, std::move(params));
}

httplib::Headers stateless_headers(const std::string& method, const std::string& name = "") {
  httplib::Headers h{{"Accept", "application/json, text/event-stream"},
                     {"MCP-Protocol-Version", "2026-07-28"},
                     {"Mcp-Method", method}};
  if (!name.empty()) h.emplace("Mcp-Name", name);
  return h;
}

TEST_F(HttpTransportTest, StatelessDiscoverNeedsNoSessionAndMintsNone) {
  ASSERT_TRUE(start());
  auto response =
      post(stateless_request(1, "server/discover"), stateless_headers("server/discover"));
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_FALSE(response->has_header("Mcp-Session-Id"));
  json body = json::parse(response->body);
  EXPECT_EQ(body["result"]["supportedVersions"], json::array({"2026-07-28"}));
  EXPECT_EQ(body["result"]["resultType"], "complete");
}

TEST_F(HttpTransportTest, StatelessToolCallIsAnsweredAndSessionsKeepWorking) {
  ASSERT_TRUE(start());
  std::string session = open_session();
  auto call =
      post(stateless_request(1, "tools/call", {{"name", "echo"}, {"arguments", {{"text", "x"}}}}),
           stateless_headers("tools/call", "echo"));
  ASSERT_TRUE(call);
  EXPECT_EQ(call->status, 200) << call->body;
  EXPECT_EQ(json::parse(call->body)["result"]["structuredContent"]["text"], "x");
  auto legacy = post(tool_call(2, "echo", {{"text", "y"}}), headers(session));
  ASSERT_TRUE(legacy);
  EXPECT_EQ(legacy->status, 200);
  EXPECT_EQ(json::parse(legacy->body)["result"]["structuredContent"]["text"], "y");
}

TEST_F(HttpTransportTest, StatelessHeadersThatDisagreeWithTheBodyAreHeaderMismatch) {
  ASSERT_TRUE(start());
  json call =
      stateless_request(1, "tools/call", {{"name", "echo"}, {"arguments", {{"text", "x"}}}});
  auto expect_mismatch = [&](const httplib::Headers& h, const std::string& why) {
    auto response = post(call, h);
    ASSERT_TRUE(response) << why;
    EXPECT_EQ(response->status, 400) << why;
    json body = json::parse(response->body);
    EXPECT_EQ(body["error"]["code"], error_code::kHeaderMismatch) << why;
    EXPECT_EQ(body["id"], 1) << why;
  };
  expect_mismatch(stateless_headers("tools/list", "echo"), "Mcp-Method names another method");
  expect_mismatch(stateless_headers("tools/call", "fail"), "Mcp-Name names another tool");
  expect_mismatch(stateless_headers("tools/call"), "Mcp-Name is missing");
  httplib::Headers no_version{
      {"Accept", "application/json"}, {"Mcp-Method", "tools/call"}, {"Mcp-Name", "echo"}};
  expect_mismatch(no_version, "MCP-Protocol-Version is missing");
  // Mcp-Name in the base64 sentinel form is decoded before it is compared ("echo").
  auto encoded = post(call, stateless_headers("tools/call", "=?base64?ZWNobw==?="));
  ASSERT_TRUE(encoded);
  EXPECT_EQ(encoded->status, 200) << encoded->body;
}

TEST_F(HttpTransportTest, StatelessErrorsTravelWithTheirHttpStatus) {
  ASSERT_TRUE(start());
  auto unknown = post(stateless_request(1, "ping"), stateless_headers("ping"));
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  EXPECT_EQ(json::parse(unknown->body)["error"]["code"], error_code::kMethodNotFound);
  json no_meta = request(2, "server/discover");
  auto missing = post(no_meta, stateless_headers("server/discover"));
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 400);
  EXPECT_EQ(json::parse(missing->body)["error"]["code"], error_code::kInvalidParams);
  json future = stateless_request(3, "server/discover");
  future["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "2099-01-01";
  httplib::Headers h = stateless_headers("server/discover");
  h.erase("MCP-Protocol-Version");
  h.emplace("MCP-Protocol-Version", "2099-01-01");
  auto unsupported = post(future, h);
  ASSERT_TRUE(unsupported);
  EXPECT_EQ(unsupported->status, 400);
  EXPECT_EQ(json::parse(unsupported->body)["error"]["code"],
            error_code::kUnsupportedProtocolVersion);
  auto capability = post(stateless_request(4, "tools/call", {{"name", "needs_sampling"}}),
                         stateless_headers("tools/call", "needs_sampling"));
  ASSERT_TRUE(capability);
  EXPECT_EQ(capability->status, 400);
}

TEST_F(HttpTransportTest, StatelessToolCallWithProgressStreamsProgressBeforeTheResponse) {
  ASSERT_TRUE(start());
  json call = stateless_request(1, "tools/call", {{"name", "progress"}});
  call["params"]["_meta"]["progressToken"] = "p";
  auto response = post(call, stateless_headers("tools/call", "progress"));
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_THAT(response->get_header_value("Content-Type"), StartsWith("text/event-stream"));
  auto events = sse_events(response->body);
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events.front()["method"], "notifications/progress");
  EXPECT_EQ(events.back()["result"]["resultType"], "complete");
}

TEST_F(HttpTransportTest, StatelessRequestsKeepTheOriginCheck) {
  ASSERT_TRUE(start());
  httplib::Headers h = stateless_headers("server/discover");
  h.emplace("Origin", "https://evil.example");
  auto response = post(stateless_request(1, "server/discover"), h);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 403);
}
}  // namespace
}  // namespace kiln::mcp
