#include "kiln/mcp/stateless_http.h"

#include <gtest/gtest.h>

#include <map>

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
}  // namespace kiln::mcp
