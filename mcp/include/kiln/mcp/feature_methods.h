// The methods both protocol eras answer from the registries: tools/list,
// resources/list|read|templates/list, prompts/list|get and completion/complete.
// Lifecycle methods (initialize, server/discover, ping, logging/setLevel) stay
// with the session, and tools/call runs on a worker there.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "kiln/mcp/json_rpc.h"
#include "kiln/mcp/protocol_context.h"
#include "kiln/mcp/server.h"

namespace kiln::mcp {

bool is_feature_method(const std::string& method);

// A request's params as an object ({} when absent); throws RpcFailure (-32602) otherwise.
const nlohmann::json& object_params(const Message& message);

// object[field] as a string; throws RpcFailure (-32602) saying `what` needs it otherwise.
std::string required_string(const nlohmann::json& object, const char* field,
                            const std::string& what);

// The result of `message` (a feature method); throws RpcFailure for JSON-RPC errors.
// The revision matters only where the wire changed (resource not found: -32002 in
// the 2025 revisions, -32602 from 2026-07-28).
nlohmann::json answer_feature_method(const Server& server, const Message& message,
                                     const ProtocolContext& context);

// A multi round-trip request's inputResponses and requestState (the seal checked:
// a state kiln did not hand out is -32602). can_ask only in the stateless revision.
ClientInput read_client_input(const json& params, const ProtocolContext& context,
                              const RequestStateSeal& seal);

// The capabilities kiln declares, in initialize and in server/discover.
nlohmann::json server_capabilities();

}  // namespace kiln::mcp
