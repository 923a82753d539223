#!/usr/bin/env bash
# kiln's main job on embedded defaults, at this stage: install what is missing,
# build, and run a short scripted MCP session against `kiln mcp` over stdio --
# the handshake, the tool list and get_task on the bundled fp16_gemm task.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# Only what the session needs, with ninja's [done/total] progress on stderr, so a first build on
# a small machine is visibly moving.
echo "kiln: building the kiln binary (a first build takes minutes; progress below)" >&2
scripts/build.sh kiln >&2
kiln=build/bin/kiln

session() {
  cat <<'JSON'
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"kiln-demo","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_task","arguments":{}}}
JSON
}

echo "== kiln $($kiln --version) -- a scripted MCP session over stdio"
session | "$kiln" --log-level warn mcp | while IFS= read -r line; do
  id=$(jq -r '.id' <<<"$line")
  case "$id" in
    1) jq -r '"<- initialize: protocol \(.result.protocolVersion), server \(.result.serverInfo.name) \(.result.serverInfo.version), capabilities: \(.result.capabilities | keys | join(", "))"' <<<"$line" ;;
    2) jq -r '"<- tools/list: \(.result.tools | map(.name) | join(", "))"' <<<"$line" ;;
    3) echo "<- tools/call get_task:"; jq -r '.result.content[0].text' <<<"$line" | sed 's/^/   /' ;;
  esac
done
