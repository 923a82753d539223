#include "kiln/mcp/protocol_context.h"

#include <gtest/gtest.h>

#include "kiln/mcp/server.h"

namespace kiln::mcp {
namespace {

Message message(const std::string& method, json params) {
  Message m;
  m.method = method;
  m.id = 1;
  m.params = std::move(params);
  return m;
}

json meta(const std::string& version = "2026-07-28") {
  return {{"io.modelcontextprotocol/protocolVersion", version},
          {"io.modelcontextprotocol/clientCapabilities", {{"elicitation", json::object()}}}};
}

RpcError error_of(const Message& m) {
  try {
    read_request_meta(m);
  } catch (const RpcFailure& failure) {
    return failure.error;
  }
  ADD_FAILURE() << "no error for " << m.params.dump();
  return {};
}

TEST(ProtocolContextTest, DiscoverAndRequestsWithMetaAreStateless) {
  EXPECT_TRUE(is_stateless_request(message("server/discover", nullptr)));
  EXPECT_TRUE(is_stateless_request(message("tools/list", {{"_meta", meta()}})));
  EXPECT_FALSE(is_stateless_request(message("tools/list", json::object())));
  EXPECT_FALSE(is_stateless_request(message("initialize", {{"protocolVersion", "2025-11-25"}})));
}

TEST(ProtocolContextTest, ReadsVersionCapabilitiesAndLogLevel) {
  json m = meta();
  m["io.modelcontextprotocol/logLevel"] = "error";
  ProtocolContext context = read_request_meta(message("tools/list", {{"_meta", m}}));
  EXPECT_TRUE(context.stateless);
  EXPECT_EQ(context.version, "2026-07-28");
  EXPECT_TRUE(context.client_capabilities.contains("elicitation"));
  ASSERT_TRUE(context.log_level);
  EXPECT_EQ(*context.log_level, LogLevel::kError);
  EXPECT_FALSE(read_request_meta(message("tools/list", {{"_meta", meta()}})).log_level);
}

TEST(ProtocolContextTest, RejectsMalformedMeta) {
  EXPECT_EQ(error_of(message("tools/list", json::object())).code, error_code::kInvalidParams);
  json m = meta();
  m["io.modelcontextprotocol/clientCapabilities"] = "all";
  EXPECT_EQ(error_of(message("tools/list", {{"_meta", m}})).code, error_code::kInvalidParams);
  m = meta();
  m["io.modelcontextprotocol/logLevel"] = "loud";
  EXPECT_EQ(error_of(message("tools/list", {{"_meta", m}})).code, error_code::kInvalidParams);
  RpcError unsupported = error_of(message("tools/list", {{"_meta", meta("2025-11-25")}}));
  EXPECT_EQ(unsupported.code, error_code::kUnsupportedProtocolVersion);
  EXPECT_EQ(unsupported.data["requested"], "2025-11-25");
}

TEST(ProtocolContextTest, MissingCapabilitiesAreTheRequiredOnesNotDeclared) {
  json required{{"sampling", json::object()}, {"elicitation", json::object()}};
  EXPECT_EQ(missing_client_capabilities({{"elicitation", json::object()}}, required),
            json({{"sampling", json::object()}}));
  EXPECT_TRUE(missing_client_capabilities(required, required).empty());
}

TEST(ProtocolContextTest, ShapesOnlyStatelessResults) {
  ServerInfo info;
  info.name = "kiln";
  info.version = "1.2.3";
  ProtocolContext legacy;
  EXPECT_EQ(shape_result(legacy, "tools/list", json{{"tools", json::array()}}, info),
            json({{"tools", json::array()}}));
  ProtocolContext stateless;
  stateless.stateless = true;
  json list = shape_result(stateless, "resources/read", json::object(), info);
  EXPECT_EQ(list["resultType"], "complete");
  EXPECT_EQ(list["ttlMs"], 0);
  EXPECT_EQ(list["cacheScope"], "private");
  EXPECT_EQ(list["_meta"]["io.modelcontextprotocol/serverInfo"]["version"], "1.2.3");
  json asked = shape_result(stateless, "tools/call", {{"resultType", "input_required"}}, info);
  EXPECT_EQ(asked["resultType"], "input_required");
  EXPECT_FALSE(asked.contains("ttlMs"));
}

TEST(ProtocolContextTest, StatelessHttpStatusFollowsTheErrorCode) {
  EXPECT_EQ(stateless_http_status({error_code::kMethodNotFound, "", nullptr}), 404);
  EXPECT_EQ(stateless_http_status({error_code::kHeaderMismatch, "", nullptr}), 400);
  EXPECT_EQ(stateless_http_status({error_code::kUnsupportedProtocolVersion, "", nullptr}), 400);
  EXPECT_EQ(stateless_http_status({error_code::kMissingRequiredClientCapability, "", nullptr}),
            400);
  EXPECT_EQ(stateless_http_status({error_code::kInvalidParams, "", nullptr}), 200);
}

}  // namespace
}  // namespace kiln::mcp
