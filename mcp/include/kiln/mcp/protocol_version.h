// The MCP protocol revisions kiln speaks, and how one is chosen at initialize.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace kiln::mcp {

// Newest first.
std::span<const std::string_view> supported_protocol_versions();
std::string_view newest_protocol_version();
bool is_supported_protocol_version(std::string_view version);

// Echo the client's version when kiln supports it, else answer with the newest;
// the client then decides whether it can continue.
std::string negotiate_protocol_version(std::string_view client_version);

// JSON-RPC batches exist in 2025-03-26 and were removed in 2025-06-18.
bool protocol_allows_batches(std::string_view version);

}  // namespace kiln::mcp
