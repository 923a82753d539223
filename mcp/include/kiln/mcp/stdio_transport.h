// MCP over stdio: newline-delimited JSON in, newline-delimited JSON out.
// Only protocol goes to the output stream; logs go to stderr.
#pragma once

#include <cstddef>
#include <cstdio>

#include "kiln/mcp/recorder.h"
#include "kiln/mcp/server.h"

namespace kiln::mcp {

struct StdioOptions {
  std::size_t max_message_bytes = 16u << 20;  // a longer line is refused, not buffered
  Recorder* recorder = nullptr;
};

// Serves one session until `in` reaches end of file; returns the exit code.
int serve_stdio(const Server& server, std::FILE* in, std::FILE* out, const StdioOptions& options);

}  // namespace kiln::mcp
