// One factory per MCP tool; each lives in its own file of tools/src/.
#pragma once

#include <memory>

#include "kiln/mcp/tool.h"
#include "kiln/tools/task_source.h"

namespace kiln::tools {

mcp::Tool make_get_task_tool(std::shared_ptr<TaskSource> source);

// Diagnostic tool for client tests (progress and cancellation); registered only
// with `kiln mcp --test-tools`.
mcp::Tool make_test_wait_tool();

}  // namespace kiln::tools
