// The MCP protocol revisions kiln speaks, and how one is chosen at initialize.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace kiln::mcp {

// Two eras share one binary. The initialize-era revisions (2025-*) negotiate once
// per session; the stateless revision (2026-07-28) carries its version in every
// request's _meta and is discovered with server/discover.

// The initialize-era revisions, newest first.
std::span<const std::string_view> supported_protocol_versions();
std::string_view newest_protocol_version();
bool is_supported_protocol_version(std::string_view version);

// Echo the client's version when kiln supports it, else answer with the newest;
// the client then decides whether it can continue.
std::string negotiate_protocol_version(std::string_view client_version);

// The stateless revisions, newest first (today only 2026-07-28).
std::span<const std::string_view> stateless_protocol_versions();
bool is_stateless_protocol_version(std::string_view version);

// JSON-RPC batches exist in 2025-03-26 and were removed in 2025-06-18.
bool protocol_allows_batches(std::string_view version);

}  // namespace kiln::mcp
