// A tool, declared once: its name, schemas, annotations and handler.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "kiln/mcp/call_context.h"

namespace kiln::mcp {

struct ToolAnnotations {
  bool read_only = true;
  bool destructive = false;
  bool idempotent = true;
  bool open_world = false;
};

// The result of a tool's work. Failures of the work itself (compile error, no
// GPU) are results with is_error, never JSON-RPC errors. `text` carries the same
// facts as `structured`, compactly, for clients that show only text.
struct ToolResult {
  nlohmann::json structured = nlohmann::json::object();
  std::string text;
  bool is_error = false;

  static ToolResult error(std::string message);
};

struct Tool {
  std::string name;  // ^[a-z_]+$
  std::string title;
  std::string description;  // under 1 KB: what it does and when to use it
  nlohmann::json input_schema;
  nlohmann::json output_schema;
  ToolAnnotations annotations;
  std::function<ToolResult(const nlohmann::json& arguments, CallContext& context)> handler;
};

}  // namespace kiln::mcp
