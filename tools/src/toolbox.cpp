#include "kiln/tools/toolbox.h"

#include <optional>
#include <set>

#include "conformance/fixtures.h"
#include "kiln/base/env.h"
#include "kiln/base/program_path.h"
#include "kiln/compiler/toolchain.h"
#include "kiln/frontier/live_log.h"
#include "kiln/frontier/result_store.h"
#include "kiln/frontier/run_manifest.h"
#include "kiln/mcp/long_call.h"
#include "kiln/tasks/task.h"
#include "kiln/tools/frontier_source.h"
#include "kiln/tools/tool_factories.h"
#include "kiln/tools/toolbox_parts.h"

namespace kiln::tools {

namespace {

// The ABI header's folder: KILN_ABI_INCLUDE, else the task bundles' include/ (tasks/include in
// the source tree), else the folder beside them, else where the toolchain finds it (beside the
// executable, the source tree): a run's bundle may lie outside kiln's tasks (kiln setup --task
// DIR), with no kiln/abi.h near it.
std::filesystem::path abi_include(const std::filesystem::path& tasks_dir) {
  std::error_code error;
  if (auto dir = env_value("KILN_ABI_INCLUDE")) return *dir;
  for (const auto& dir : {tasks_dir / "include", tasks_dir / ".." / "include"}) {
    if (std::filesystem::exists(dir / "kiln" / "abi.h", error)) return dir;
  }
  auto found = compiler::toolchain_from_environment(program_beside_self("kiln")).abi_include;
  return found.empty() ? tasks_dir / "include" : found;
}

// Where every tool that takes a candidate finds its file: the run directory (the working
// directory when serving without one), or the task bundles.
CandidateRoots candidate_roots(const ToolboxConfig& config) {
  std::error_code no_cwd;
  const std::filesystem::path zoo_dir =
      kb::resolve_paths(config.kb_dir, config.kb_cache_dir).zoo_dir();
  return CandidateRoots{
      config.run_dir.empty() ? std::filesystem::current_path(no_cwd) : config.run_dir,
      {config.tasks_dir, zoo_dir},
      zoo_dir};
}

CompileToolConfig compile_config(const ToolboxConfig& config, const std::filesystem::path& hw_dir) {
  CompileToolConfig compile;
  compile.roots = candidate_roots(config);
  compile.abi_include = abi_include(config.tasks_dir);
  compile.hw_dir = hw_dir;
  compile.cache_root = config.compile_cache_dir;
  return compile;
}

SimulateToolConfig simulate_config(const ToolboxConfig& config) {
  SimulateToolConfig simulate;
  simulate.roots = candidate_roots(config);
  simulate.sim_runner = config.sim_runner.empty() ? default_sim_runner_path() : config.sim_runner;
  return simulate;
}

// The run's manifest, when the run directory has one: its task replaces the configured one,
// after the freeze check (the bundle must still hash as it did at `kiln setup`).
Result<std::optional<frontier::RunManifest>> run_manifest(ToolboxConfig& config) {
  if (config.run_dir.empty()) return std::optional<frontier::RunManifest>();
  std::error_code error;
  if (!std::filesystem::exists(config.run_dir / frontier::kManifestFile, error))
    return std::optional<frontier::RunManifest>();
  auto manifest = frontier::read_manifest(config.run_dir);
  if (!manifest) return manifest.error();
  auto task = tasks::load_task(manifest->task_dir);
  if (!task)
    return make_error("the run's task bundle no longer loads: " + task.error().message +
                      "; restore it, or prepare a new run with `kiln setup`");
  if (auto frozen = frontier::check_frozen(*manifest, *task); !frozen) return frozen.error();
  config.tasks_dir = manifest->task_dir.parent_path();
  config.default_task = manifest->task_name;
  if (config.runner_urls.empty())
    for (const auto& runner : manifest->runners) config.runner_urls.push_back(runner.url);
  return std::optional<frontier::RunManifest>(*manifest);
}

}  // namespace

Status register_toolbox(mcp::Server& server, const ToolboxConfig& given) {
  ToolboxConfig config = given;
  auto manifest = run_manifest(config);
  if (!manifest) return manifest.error();
  const kb::KbPaths kb_paths = kb::resolve_paths(config.kb_dir, config.kb_cache_dir);
  auto source =
      std::make_shared<TaskSource>(config.tasks_dir, config.default_task, kb_paths.zoo_dir());
  // A run's task is loaded now, once, and served from memory from here on: the contract the
  // freeze check just accepted is the one every tool sees.
  if (*manifest) {
    if (auto task = source->get(""); !task) return task.error();
  }
  // Touches no files: the kb index is opened (and built if needed) by the first kb call.
  auto kb = std::make_shared<kb::KbService>(kb_paths);
  std::vector<mcp::Tool> tools;
  tools.push_back(make_get_task_tool(source));
  tools.push_back(make_search_zoo_tool(kb));
  tools.push_back(make_read_zoo_entry_tool(kb));
  tools.push_back(make_read_ptx_spec_tool(kb));
  auto compiler =
      std::make_shared<CandidateCompiler>(source, compile_config(config, kb->paths().hw_dir()));
  tools.push_back(make_compile_tool(compiler));
  tools.push_back(make_simulate_tool(source, simulate_config(config)));
  // Touches nothing either: the runner is chosen and the store opened by the first GPU call.
  GpuJobsConfig gpu;
  gpu.roots = candidate_roots(config);
  gpu.results_db =
      config.results_db.empty() ? frontier::default_store_path(config.run_dir) : config.results_db;
  gpu.runner = runner::runner_settings_from_environment(config.runner_urls, config.probe_local_gpu,
                                                        config.worker);
  if (!config.run_dir.empty()) gpu.live_log = config.run_dir / frontier::kLiveLogFile;
  const std::filesystem::path results_db = gpu.results_db;
  auto gpu_jobs = std::make_shared<GpuJobs>(source, std::move(gpu));
  tools.push_back(make_benchmark_tool(gpu_jobs));
  tools.push_back(make_profile_tool(gpu_jobs));
  FrontierSourceConfig frontier_config;
  frontier_config.run_dir = config.run_dir;
  frontier_config.store = results_db;
  if (*manifest) frontier_config.budget = (*manifest)->budget;
  frontier_config.zoo_dir = kb->paths().zoo_dir();
  auto frontier = std::make_shared<FrontierSource>(
      source, frontier_config, config.revalidator ? config.revalidator : gpu_revalidator(gpu_jobs),
      config.ptx_hasher ? config.ptx_hasher : compiler_ptx_hasher(compiler));
  tools.push_back(make_record_candidate_tool(frontier));
  tools.push_back(make_list_frontier_tool(frontier));
  tools.push_back(make_synccheck_tool(compiler, gpu_jobs, simulate_config(config)));
  tools.push_back(make_racecheck_tool(compiler, gpu_jobs, simulate_config(config)));
  if (config.test_tools) tools.push_back(make_test_wait_tool());
  if (config.conformance_fixtures) conformance::add_conformance_fixtures(server, tools);
  // Work that can outlast a client's timeout answers within wait_s, and wait_job has the rest
  // (README.md, "Long calls"); with a run directory the results outlive this process.
  if (!config.run_dir.empty()) server.jobs()->set_directory(config.run_dir / "jobs");
  tools.push_back(make_wait_job_tool(server.jobs()));
  const std::set<std::string> long_tools = {"benchmark", "profile",   "simulate",
                                            "synccheck", "racecheck", "test_wait"};
  for (auto& tool : tools) {
    if (long_tools.count(tool.name)) {
      auto wrapped = mcp::with_wait_budget(std::move(tool), server.jobs());
      if (!wrapped) return wrapped.error();
      tool = std::move(*wrapped);
    }
    if (auto status = server.tools().add(std::move(tool)); !status) return status;
  }
  server.resources().add(make_task_resource(source));
  server.resources().add(make_zoo_resource_template(kb));
  server.resources().add(make_ptx_resource_template(kb));
  server.resources().add(make_frontier_resource(frontier));
  server.prompts().add(make_optimize_prompt(source, config.run_dir));
  return Ok{};
}

}  // namespace kiln::tools
