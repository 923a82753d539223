#include "kiln/tools/toolbox.h"

#include "kiln/frontier/result_store.h"
#include "kiln/tools/tool_factories.h"
#include "kiln/tools/toolbox_parts.h"

namespace kiln::tools {

Status register_toolbox(mcp::Server& server, const ToolboxConfig& config) {
  auto source = std::make_shared<TaskSource>(config.tasks_dir, config.default_task);
  // Touches no files: the kb index is opened (and built if needed) by the first kb call.
  auto kb = std::make_shared<kb::KbService>(kb::resolve_paths(config.kb_dir, config.kb_cache_dir));
  std::vector<mcp::Tool> tools;
  tools.push_back(make_get_task_tool(source));
  tools.push_back(make_search_zoo_tool(kb));
  tools.push_back(make_read_zoo_entry_tool(kb));
  tools.push_back(make_read_ptx_spec_tool(kb));
  // Touches nothing either: the runner is chosen and the store opened by the first GPU call.
  GpuJobsConfig gpu;
  std::error_code no_cwd;
  gpu.root = config.run_dir.empty() ? std::filesystem::current_path(no_cwd) : config.run_dir;
  gpu.results_db = config.results_db.empty() ? frontier::default_store_path(config.run_dir) : config.results_db;
  gpu.runner = runner::runner_settings_from_environment(config.runner_urls, config.probe_local_gpu, config.worker);
  auto gpu_jobs = std::make_shared<GpuJobs>(source, std::move(gpu));
  tools.push_back(make_benchmark_tool(gpu_jobs));
  tools.push_back(make_profile_tool(gpu_jobs));
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
