#include "kiln/mcp/json_rpc.h"

#include "kiln/base/json_text.h"

namespace kiln::mcp {
namespace {

RejectedMessage invalid(json id, std::string why) {
  return RejectedMessage{std::move(id),
                         RpcError{error_code::kInvalidRequest, std::move(why), nullptr}};
}

bool valid_id(const json& id) { return id.is_string() || id.is_number_integer(); }

}  // namespace

std::variant<json, RejectedMessage> parse_json_text(const std::string& text) {
  // Bounded: a deeply nested message would overflow the stack of the session that copies it.
  auto value = parse_json_bounded(text);
  if (!value) {
    return RejectedMessage{nullptr,
                           RpcError{error_code::kParseError,
                                    "parse error: the message " + value.error().message, nullptr}};
  }
  return std::move(*value);
}

std::variant<Message, RejectedMessage> parse_message(const json& value) {
  if (!value.is_object()) {
    return invalid(nullptr, "invalid request: a JSON-RPC message must be a JSON object");
  }
  json id = nullptr;
  if (auto it = value.find("id"); it != value.end()) {
    if (!valid_id(*it)) {
      return invalid(nullptr, "invalid request: \"id\" must be a string or an integer (not null)");
    }
    id = *it;
  }
  auto version = value.find("jsonrpc");
  if (version == value.end() || *version != "2.0") {
    return invalid(id, "invalid request: \"jsonrpc\" must be \"2.0\"");
  }

  Message message;
  message.id = id;
  auto method = value.find("method");
  if (method != value.end()) {
    if (!method->is_string()) return invalid(id, "invalid request: \"method\" must be a string");
    message.method = method->get<std::string>();
    if (auto params = value.find("params"); params != value.end()) {
      if (!params->is_object() && !params->is_array()) {
        return invalid(id, "invalid request: \"params\" must be an object or an array");
      }
      message.params = *params;
    }
    message.kind = id.is_null() ? Message::Kind::kNotification : Message::Kind::kRequest;
    return message;
  }

  // No method: this must be a response to a request the server sent.
  message.kind = Message::Kind::kResponse;
  auto result = value.find("result");
  auto error = value.find("error");
  if (id.is_null()) return invalid(nullptr, "invalid request: a response needs an \"id\"");
  if ((result == value.end()) == (error == value.end())) {
    return invalid(
        id,
        "invalid request: a message needs \"method\", or exactly one of \"result\" and \"error\"");
  }
  if (result != value.end()) {
    message.result = *result;
  } else {
    if (!error->is_object() || !error->contains("code") || !(*error)["code"].is_number_integer() ||
        !error->contains("message") || !(*error)["message"].is_string()) {
      return invalid(id,
                     "invalid request: \"error\" must be an object with integer \"code\" and "
                     "string \"message\"");
    }
    message.error = RpcError{(*error)["code"].get<int>(), (*error)["message"].get<std::string>(),
                             error->value("data", json(nullptr))};
  }
  return message;
}

void fail(int code, std::string message, json data) {
  throw RpcFailure{RpcError{code, std::move(message), std::move(data)}};
}

json make_result(const json& id, json result) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json make_error_response(const json& id, const RpcError& error) {
  json body{{"code", error.code}, {"message", error.message}};
  if (!error.data.is_null()) body["data"] = error.data;
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(body)}};
}

json make_notification(const std::string& method, json params) {
  json message{{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.is_null()) message["params"] = std::move(params);
  return message;
}

std::string id_key(const json& id) { return id.dump(); }

}  // namespace kiln::mcp
