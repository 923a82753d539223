#include "kiln/tools/toolbox.h"

#include "kiln/tools/tool_factories.h"
#include "kiln/tools/toolbox_parts.h"

namespace kiln::tools {

Status register_toolbox(mcp::Server& server, const ToolboxConfig& config) {
  auto source = std::make_shared<TaskSource>(config.tasks_dir, config.default_task);
  std::vector<mcp::Tool> tools;
  // Touches no files: the kb index is opened (and built if needed) by the first kb call.
  auto kb = std::make_shared<kb::KbService>(kb::resolve_paths(config.kb_dir, config.kb_cache_dir));
  tools.push_back(make_get_task_tool(source));
  tools.push_back(make_search_zoo_tool(kb));
  tools.push_back(make_read_zoo_entry_tool(kb));
  tools.push_back(make_read_ptx_spec_tool(kb));
  if (config.test_tools) tools.push_back(make_test_wait_tool());
  for (auto& tool : tools) {
    if (auto status = server.tools().add(std::move(tool)); !status) return status;
  }
  server.resources().add(make_task_resource(source));
  server.resources().add(make_zoo_resource_template(kb));
  server.resources().add(make_ptx_resource_template(kb));
  server.prompts().add(make_optimize_prompt(source, config.run_dir));
  return Ok{};
}

}  // namespace kiln::tools
