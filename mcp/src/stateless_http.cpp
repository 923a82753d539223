#include "kiln/mcp/stateless_http.h"

#include "kiln/mcp/tasks.h"

namespace kiln::mcp {
namespace {

int base64_digit(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

std::optional<std::string> decode_base64(const std::string& text) {
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  std::size_t end = text.size();
  while (end > 0 && text[end - 1] == '=') --end;
  if (text.size() - end > 2) return std::nullopt;
  for (std::size_t i = 0; i < end; ++i) {
    int digit = base64_digit(text[i]);
    if (digit < 0) return std::nullopt;
    buffer = (buffer << 6) | static_cast<unsigned>(digit);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xFF));
    }
  }
  return out;
}

[[noreturn]] void mismatch(const std::string& why) {
  fail(error_code::kHeaderMismatch, "Header mismatch: " + why);
}

// The body value Mcp-Name mirrors, for the methods that carry one.
std::optional<std::string> name_in_body(const Message& message) {
  const char* field = message.method == "resources/read"                                    ? "uri"
                      : (message.method == "tools/call" || message.method == "prompts/get") ? "name"
                      : is_task_method(message.method) ? "taskId"
                                                       : nullptr;
  if (!field || !message.params.is_object() || !message.params.contains(field) ||
      !message.params[field].is_string())
    return std::nullopt;
  return message.params[field].get<std::string>();
}

}  // namespace

std::optional<std::string> decode_header_value(const std::string& value) {
  static const std::string kPrefix = "=?base64?";
  static const std::string kSuffix = "?=";
  if (value.size() < kPrefix.size() + kSuffix.size() || value.compare(0, kPrefix.size(), kPrefix) ||
      value.compare(value.size() - kSuffix.size(), kSuffix.size(), kSuffix))
    return value;
  return decode_base64(
      value.substr(kPrefix.size(), value.size() - kPrefix.size() - kSuffix.size()));
}

ProtocolContext check_stateless_post(const Message& message, const HeaderLookup& header) {
  auto version_header = header("MCP-Protocol-Version");
  // A header that disagrees with the body's version is a mismatch even when neither
  // names a revision kiln speaks; a missing _meta is reported as such first.
  if (version_header && message.params.is_object() && message.params.contains("_meta") &&
      message.params["_meta"].is_object()) {
    const json& meta = message.params["_meta"];
    if (meta.contains(meta_key::kProtocolVersion) && meta[meta_key::kProtocolVersion].is_string() &&
        meta[meta_key::kProtocolVersion].get<std::string>() != *version_header)
      mismatch("MCP-Protocol-Version header " + *version_header + " does not match _meta " +
               meta_key::kProtocolVersion + " " +
               meta[meta_key::kProtocolVersion].get<std::string>());
  }
  ProtocolContext context = read_request_meta(message);
  if (!version_header)
    mismatch("the MCP-Protocol-Version header is missing; send MCP-Protocol-Version: " +
             context.version);
  auto method = header("Mcp-Method");
  if (!method) mismatch("the Mcp-Method header is missing; send Mcp-Method: " + message.method);
  if (*method != message.method)
    mismatch("Mcp-Method header value '" + *method + "' does not match body value '" +
             message.method + "'");
  if (auto body_name = name_in_body(message)) {
    auto name = header("Mcp-Name");
    if (!name) mismatch("the Mcp-Name header is missing; " + message.method + " needs it");
    auto decoded = decode_header_value(*name);
    if (!decoded) mismatch("the Mcp-Name header is not valid =?base64?...?= text");
    if (*decoded != *body_name)
      mismatch("Mcp-Name header value '" + *decoded + "' does not match body value '" + *body_name +
               "'");
  }
  return context;
}

}  // namespace kiln::mcp
