// Everything kiln offers over MCP, registered on a server in one call.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/mcp/server.h"

namespace kiln::tools {

struct ToolboxConfig {
  std::filesystem::path tasks_dir;     // folder of task bundles (tasks/NAME/task.json)
  std::filesystem::path run_dir;       // the run directory; empty when serving without one
  std::string default_task;            // task used when a call names none; empty: the only one
  bool test_tools = false;             // also register diagnostic tools for client tests
  std::filesystem::path kb_dir;        // kb/ (zoo, PTX notes, hw); empty: kb::default_kb_dir()
  std::filesystem::path kb_cache_dir;  // where the kb index lives; empty: kiln::default_cache_dir()
  std::filesystem::path compile_cache_dir;  // compile results; empty: kiln::default_cache_dir()
  // GPU tools: KILN_RUNNER (comma-separated URLs) overrides runner_urls; KILN_RUNNER_TOKEN is the
  // token.
  std::vector<std::string> runner_urls;  // the runner_urls setting
  bool probe_local_gpu =
      true;  // with no runner URL, use this machine's GPU (/dev/nvidia0 + kiln-worker)
  std::filesystem::path worker;      // kiln-worker for the local GPU; empty: next to the executable
  std::filesystem::path sim_runner;  // kiln-sim-run for simulate; empty: next to the executable
  std::filesystem::path
      results_db;  // the result store; empty: frontier::default_store_path(run_dir)
};

Status register_toolbox(mcp::Server& server, const ToolboxConfig& config);

}  // namespace kiln::tools
