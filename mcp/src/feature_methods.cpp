#include "kiln/mcp/feature_methods.h"

namespace kiln::mcp {
namespace {

json read_resource(const Server& server, const json& params, const ProtocolContext& context) {
  std::string uri = required_string(params, "uri", "resources/read");
  auto contents = server.resources().read(uri);
  if (contents) return *contents;
  if (!server.resources().knows(uri)) {
    fail(context.stateless ? error_code::kInvalidParams : error_code::kResourceNotFound,
         "Resource not found: " + contents.error().message, json{{"uri", uri}});
  }
  fail(error_code::kInternalError, contents.error().message);
}

json complete(const Server& server, const json& params) {
  const std::string what = "completion/complete";
  auto ref = params.find("ref");
  if (ref == params.end() || !ref->is_object())
    fail(error_code::kInvalidParams, what + " needs an object \"ref\"");
  auto argument = params.find("argument");
  if (argument == params.end() || !argument->is_object())
    fail(error_code::kInvalidParams, what + " needs an object \"argument\" with name and value");
  std::string name = required_string(*argument, "name", what + " argument");
  std::string value = required_string(*argument, "value", what + " argument");
  std::string type = required_string(*ref, "type", what + " ref");
  auto context = completion_context(params);
  Result<json> result = make_error("");
  if (type == "ref/prompt") {
    result = server.prompts().complete(required_string(*ref, "name", what + " ref/prompt"), name,
                                       value, context);
  } else if (type == "ref/resource") {
    result = server.resources().complete(required_string(*ref, "uri", what + " ref/resource"), name,
                                         value, context);
  } else {
    fail(error_code::kInvalidParams,
         what + " ref.type must be \"ref/prompt\" or \"ref/resource\", not \"" + type + "\"");
  }
  if (!result) fail(error_code::kInvalidParams, result.error().message);
  return *result;
}

}  // namespace

const json& object_params(const Message& message) {
  static const json kEmpty = json::object();
  if (message.params.is_null()) return kEmpty;
  if (!message.params.is_object())
    fail(error_code::kInvalidParams, "params of " + message.method + " must be an object");
  return message.params;
}

std::string required_string(const json& object, const char* field, const std::string& what) {
  auto it = object.find(field);
  if (it == object.end() || !it->is_string())
    fail(error_code::kInvalidParams, what + " needs a string \"" + field + "\"");
  return it->get<std::string>();
}

bool is_feature_method(const std::string& method) {
  static const char* kMethods[] = {
      "tools/list",   "resources/list", "resources/read",     "resources/templates/list",
      "prompts/list", "prompts/get",    "completion/complete"};
  for (const char* m : kMethods)
    if (method == m) return true;
  return false;
}

json answer_feature_method(const Server& server, const Message& message,
                           const ProtocolContext& context) {
  const std::string& method = message.method;
  const json& params = object_params(message);
  if (method == "tools/list") {
    json tools = server.tools().list();
    // execution.taskSupport names the tasks extension of 2026-07-28 (tasks.h); kiln offers no
    // tasks of the 2025 revisions, whose clients would read it as their own experimental tasks.
    if (!context.stateless)
      for (auto& tool : tools["tools"]) tool.erase("execution");
    return tools;
  }
  if (method == "resources/list") return server.resources().list();
  if (method == "resources/templates/list") return server.resources().list_templates();
  if (method == "resources/read") return read_resource(server, params, context);
  if (method == "prompts/list") return server.prompts().list();
  if (method == "prompts/get") {
    std::string name = required_string(params, "name", method);
    auto prompt =
        server.prompts().get(name, params.value("arguments", json::object()),
                             read_client_input(params, context, server.request_state_seal()));
    if (!prompt) fail(error_code::kInvalidParams, prompt.error().message);
    if (auto* ask = std::get_if<InputRequired>(&*prompt))
      return input_required_result(*ask, server.request_state_seal());
    return std::get<json>(std::move(*prompt));
  }
  if (method == "completion/complete") return complete(server, params);
  fail(error_code::kMethodNotFound, "method not found: " + method);
}

ClientInput read_client_input(const json& params, const ProtocolContext& context,
                              const RequestStateSeal& seal) {
  ClientInput input;
  input.can_ask = context.stateless;
  input.client_capabilities = context.client_capabilities;
  if (!context.stateless || !params.is_object()) return input;
  if (params.contains("inputResponses")) {
    if (!params["inputResponses"].is_object())
      fail(error_code::kInvalidParams, "inputResponses must be an object keyed like inputRequests");
    input.responses = params["inputResponses"];
  }
  if (params.contains("requestState")) {
    const json& state = params["requestState"];
    auto opened = state.is_string() ? seal.open(state.get<std::string>()) : std::nullopt;
    if (!opened)
      fail(error_code::kInvalidParams,
           "requestState failed its integrity check: send back the requestState of the last "
           "input_required result unchanged, or start over without one");
    input.request_state = *opened;
  }
  return input;
}

json server_capabilities() {
  // logging: in the stateless revision the level is set per request (_meta logLevel).
  return json{{"tools", {{"listChanged", false}}},
              {"resources", {{"subscribe", false}, {"listChanged", false}}},
              {"prompts", {{"listChanged", false}}},
              {"completions", json::object()},
              {"logging", json::object()}};
}

}  // namespace kiln::mcp
