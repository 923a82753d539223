// Settings shared by the subcommands: where the data lives, logging.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "kiln/base/result.h"
#include "kiln/mcp/server.h"
#include "kiln/tools/toolbox.h"

namespace kiln::cli {

struct GlobalOptions {
  std::string
      tasks_dir;     // empty: KILN_TASKS_DIR, then the source tree, then <prefix>/share/kiln/tasks
  std::string task;  // default task name
  std::string log_level = "info";
};

std::string version();

// This executable (/proc/self/exe), for the configurations `kiln setup` writes.
std::filesystem::path program_path();

// Logs go to stderr only: in stdio mode stdout carries nothing but protocol.
void setup_logging(const std::string& level);

std::filesystem::path resolve_tasks_dir(const GlobalOptions& options);

// A server with every tool, resource and prompt registered; `test_tools` adds the
// diagnostic tools, `conformance_fixtures` the MCP conformance suite's fixtures.
Result<std::unique_ptr<mcp::Server>> make_server(const GlobalOptions& options,
                                                 const std::filesystem::path& run_dir,
                                                 bool test_tools,
                                                 bool conformance_fixtures = false);

}  // namespace kiln::cli
