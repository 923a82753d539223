#include "kiln/tools/toolbox.h"

#include "kiln/tools/tool_factories.h"
#include "kiln/tools/toolbox_parts.h"

namespace kiln::tools {

Status register_toolbox(mcp::Server& server, const ToolboxConfig& config) {
  auto source = std::make_shared<TaskSource>(config.tasks_dir, config.default_task);
  std::vector<mcp::Tool> tools;
  tools.push_back(make_get_task_tool(source));
  if (config.test_tools) tools.push_back(make_test_wait_tool());
  for (auto& tool : tools) {
    if (auto status = server.tools().add(std::move(tool)); !status) return status;
  }
  server.resources().add(make_task_resource(source));
  server.prompts().add(make_optimize_prompt(source, config.run_dir));
  return Ok{};
}

}  // namespace kiln::tools
