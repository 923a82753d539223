// What one request is answered under: the protocol revision and what the client
// declared. An initialize-era (2025-*) session fixes it once at initialize; a
// stateless (2026-07-28) request carries it in its own _meta, so every request
// of that era is read, checked and answered on its own.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "kiln/mcp/json_rpc.h"
#include "kiln/mcp/log_level.h"

namespace kiln::mcp {

struct ServerInfo;

// The _meta keys of the stateless revision.
namespace meta_key {
inline constexpr const char* kProtocolVersion = "io.modelcontextprotocol/protocolVersion";
inline constexpr const char* kClientCapabilities = "io.modelcontextprotocol/clientCapabilities";
inline constexpr const char* kClientInfo = "io.modelcontextprotocol/clientInfo";
inline constexpr const char* kLogLevel = "io.modelcontextprotocol/logLevel";
inline constexpr const char* kServerInfo = "io.modelcontextprotocol/serverInfo";
}  // namespace meta_key

struct ProtocolContext {
  std::string version;  // empty before initialize in the initialize era
  bool stateless = false;
  nlohmann::json client_capabilities = nlohmann::json::object();
  // Stateless: the request's own logLevel; nullopt means no notifications/message at all.
  std::optional<LogLevel> log_level;
};

// A request of the stateless era: server/discover, or one whose params._meta names a
// protocol version. Everything else belongs to the initialize era.
bool is_stateless_request(const Message& message);

// Reads and checks a stateless request's _meta. Throws RpcFailure: -32602 when a
// required key is missing or malformed, -32022 (with the supported versions) when
// the revision is not one kiln speaks.
ProtocolContext read_request_meta(const Message& message);

// The capabilities in `required` (e.g. {"sampling": {}}) that `declared` lacks;
// an empty object when it has them all.
nlohmann::json missing_client_capabilities(const nlohmann::json& declared,
                                           const nlohmann::json& required);

// A result as the request's revision shapes it. Stateless: resultType "complete"
// unless set, ttlMs/cacheScope on the cacheable results, and the server's identity
// in _meta. Initialize era: unchanged.
nlohmann::json shape_result(const ProtocolContext& context, const std::string& method,
                            nlohmann::json result, const ServerInfo& server);

// The HTTP status a stateless error response travels with (200 for errors the
// revision leaves to JSON-RPC alone).
int stateless_http_status(const RpcError& error);

}  // namespace kiln::mcp
