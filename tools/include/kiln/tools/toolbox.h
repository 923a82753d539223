// Everything kiln offers over MCP, registered on a server in one call.
#pragma once

#include <filesystem>
#include <string>

#include "kiln/base/result.h"
#include "kiln/mcp/server.h"

namespace kiln::tools {

struct ToolboxConfig {
  std::filesystem::path tasks_dir;  // folder of task bundles (tasks/NAME/task.json)
  std::filesystem::path run_dir;    // the run directory; empty when serving without one
  std::string default_task;         // task used when a call names none; empty: the only one
  bool test_tools = false;          // also register diagnostic tools for client tests
  std::filesystem::path kb_dir;        // kb/ (zoo, PTX notes, hw); empty: kb::default_kb_dir()
  std::filesystem::path kb_cache_dir;  // where the kb index lives; empty: kb::default_cache_dir()
};

Status register_toolbox(mcp::Server& server, const ToolboxConfig& config);

}  // namespace kiln::tools
