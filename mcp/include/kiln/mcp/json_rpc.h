// JSON-RPC 2.0 messages: parsing with precise errors, and building replies.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>

namespace kiln::mcp {

using json = nlohmann::json;

// The error codes of JSON-RPC 2.0 and the ones MCP adds.
namespace error_code {
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kResourceNotFound = -32002;  // MCP 2025: resources/read of an unknown URI
// MCP 2026-07-28 (the sub-range -32020..-32099 the specification reserves).
inline constexpr int kHeaderMismatch = -32020;  // HTTP headers disagree with the body
inline constexpr int kMissingRequiredClientCapability = -32021;
inline constexpr int kUnsupportedProtocolVersion = -32022;
}  // namespace error_code

struct RpcError {
  int code = error_code::kInternalError;
  std::string message;
  json data;  // null when absent
};

// A JSON-RPC error raised while answering a request. It is thrown and caught
// inside kiln_mcp only (the dispatch code), never across the library boundary.
struct RpcFailure {
  RpcError error;
};
[[noreturn]] void fail(int code, std::string message, json data = nullptr);

struct Message {
  enum class Kind { kRequest, kNotification, kResponse };
  Kind kind = Kind::kRequest;
  json id;                        // requests and responses: a string or an integer
  std::string method;             // requests and notifications
  json params;                    // object, or null when absent
  json result;                    // successful responses
  std::optional<RpcError> error;  // error responses

  bool is_request() const { return kind == Kind::kRequest; }
  bool is_notification() const { return kind == Kind::kNotification; }
  bool is_response() const { return kind == Kind::kResponse; }
};

// A message that could not be accepted, with the id to answer (null when unknown).
struct RejectedMessage {
  json id;
  RpcError error;
};

// Validates one already-parsed JSON value as a JSON-RPC 2.0 message.
std::variant<Message, RejectedMessage> parse_message(const json& value);

// Parses text; malformed JSON, and JSON nested deeper than kiln::kMaxJsonDepth
// (kiln/base/json_text.h), become a -32700 rejection. Batches (arrays) are
// returned as a json array for the caller, which decides whether they are allowed.
std::variant<json, RejectedMessage> parse_json_text(const std::string& text);

json make_result(const json& id, json result);
json make_error_response(const json& id, const RpcError& error);
json make_notification(const std::string& method, json params);

// A stable string key for a request id (1 and "1" are different ids).
std::string id_key(const json& id);

}  // namespace kiln::mcp
