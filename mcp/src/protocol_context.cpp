#include "kiln/mcp/protocol_context.h"

#include "kiln/mcp/protocol_version.h"
#include "kiln/mcp/server.h"

namespace kiln::mcp {
namespace {

const json* find_meta(const Message& message) {
  if (!message.params.is_object()) return nullptr;
  auto meta = message.params.find("_meta");
  return meta != message.params.end() && meta->is_object() ? &*meta : nullptr;
}

json supported_versions_json() {
  json versions = json::array();
  for (auto v : stateless_protocol_versions()) versions.push_back(std::string(v));
  return versions;
}

bool cacheable(const std::string& method) {
  return method == "server/discover" || method == "tools/list" || method == "prompts/list" ||
         method == "resources/list" || method == "resources/templates/list" ||
         method == "resources/read";
}

}  // namespace

bool is_stateless_request(const Message& message) {
  if (message.method == "server/discover") return true;
  const json* meta = find_meta(message);
  return meta && meta->contains(meta_key::kProtocolVersion);
}

ProtocolContext read_request_meta(const Message& message) {
  if (!message.params.is_null() && !message.params.is_object())
    fail(error_code::kInvalidParams, "params of " + message.method + " must be an object");
  const json* meta = find_meta(message);
  auto missing = [&](const char* key) {
    fail(error_code::kInvalidParams,
         std::string("Invalid params: _meta needs \"") + key +
             "\" (protocol revision 2026-07-28 carries it in every request; clients of the "
             "2025 revisions send initialize first)");
  };
  if (!meta) missing(meta_key::kProtocolVersion);
  auto version = meta->find(meta_key::kProtocolVersion);
  if (version == meta->end()) missing(meta_key::kProtocolVersion);
  if (!version->is_string())
    fail(error_code::kInvalidParams, std::string("Invalid params: _meta \"") +
                                         meta_key::kProtocolVersion +
                                         "\" must be a string such as \"2026-07-28\"");
  auto capabilities = meta->find(meta_key::kClientCapabilities);
  if (capabilities == meta->end()) missing(meta_key::kClientCapabilities);
  if (!capabilities->is_object())
    fail(error_code::kInvalidParams, std::string("Invalid params: _meta \"") +
                                         meta_key::kClientCapabilities + "\" must be an object");
  std::string requested = version->get<std::string>();
  if (!is_stateless_protocol_version(requested))
    fail(error_code::kUnsupportedProtocolVersion,
         "Unsupported protocol version " + requested +
             "; kiln speaks 2026-07-28 per request, and 2025-11-25, 2025-06-18 and 2025-03-26 "
             "through initialize",
         json{{"supported", supported_versions_json()}, {"requested", requested}});

  ProtocolContext context;
  context.version = requested;
  context.stateless = true;
  context.client_capabilities = *capabilities;
  auto level = meta->find(meta_key::kLogLevel);
  if (level != meta->end()) {
    auto parsed = level->is_string() ? parse_log_level(level->get<std::string>()) : std::nullopt;
    if (!parsed)
      fail(error_code::kInvalidParams,
           std::string("Invalid params: _meta \"") + meta_key::kLogLevel +
               "\" must be one of debug, info, notice, warning, error, critical, alert, "
               "emergency");
    context.log_level = *parsed;
  }
  return context;
}

json missing_client_capabilities(const json& declared, const json& required) {
  json missing = json::object();
  if (!required.is_object()) return missing;
  for (const auto& [name, value] : required.items()) {
    if (!declared.is_object() || !declared.contains(name) || declared[name].is_null())
      missing[name] = value;
  }
  return missing;
}

json shape_result(const ProtocolContext& context, const std::string& method, json result,
                  const ServerInfo& server) {
  if (!context.stateless || !result.is_object()) return result;
  if (!result.contains("resultType")) result["resultType"] = "complete";
  if (cacheable(method)) {
    // kiln's lists and resources are fixed for the life of the process but are the
    // operator's (run, task, zoo), so a shared cache must not keep them; ttlMs 0 asks
    // the client to revalidate rather than trust a copy.
    if (!result.contains("ttlMs")) result["ttlMs"] = 0;
    if (!result.contains("cacheScope")) result["cacheScope"] = "private";
  }
  json& meta = result["_meta"];
  if (!meta.is_object()) meta = json::object();
  meta[meta_key::kServerInfo] = {{"name", server.name}, {"version", server.version}};
  return result;
}

int stateless_http_status(const RpcError& error) {
  switch (error.code) {
    case error_code::kMethodNotFound:
      return 404;
    case error_code::kHeaderMismatch:
    case error_code::kMissingRequiredClientCapability:
    case error_code::kUnsupportedProtocolVersion:
      return 400;
    default:
      return 200;
  }
}

}  // namespace kiln::mcp
