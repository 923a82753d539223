// The checks a stateless (2026-07-28) POST passes before the session sees it:
// its _meta, and the headers that mirror the body (MCP-Protocol-Version,
// Mcp-Method, Mcp-Name), so a proxy routing on a header and kiln acting on the
// body can never disagree.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "kiln/mcp/json_rpc.h"
#include "kiln/mcp/protocol_context.h"

namespace kiln::mcp {

using HeaderLookup = std::function<std::optional<std::string>(const char* name)>;

// The request's context; throws RpcFailure: -32602 for a missing or malformed _meta,
// -32020 (HeaderMismatch) for a missing header or one that disagrees with the body,
// -32022 for a revision kiln does not speak. Every one travels with HTTP 400.
ProtocolContext check_stateless_post(const Message& message, const HeaderLookup& header);

// An Mcp-Name / Mcp-Param value as sent: plain, or "=?base64?...?=" decoded;
// nullopt when the base64 is malformed.
std::optional<std::string> decode_header_value(const std::string& value);

}  // namespace kiln::mcp
