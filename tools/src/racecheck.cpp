// racecheck: shared- and global-memory hazards (RAW, WAR, WAW between threads) in a candidate.
// The sim engine runs the task's sim workloads under the simulator's race detector on this CPU,
// under several warp schedules (race_sim_engine.h); the gpu engine runs compute-sanitizer's
// racecheck on a runner, on one workload (sanitize_engine.h). The default is gpu when a runner
// is configured, else sim.
#include "check_report_output.h"
#include "kiln/tasks/zoo_task.h"
#include "kiln/tools/tool_factories.h"
#include "race_sim_engine.h"
#include "sanitize_engine.h"
#include "sim_checker_run.h"

namespace kiln::tools {

using json = nlohmann::json;

namespace {

json sim_properties() {
  json properties = sim_checker_properties(kMaxRaceSchedules);
  properties["engine"] = {
      {"type", "string"},
      {"enum", {"sim", "gpu"}},
      {"description",
       "\"sim\": the simulator's race detector on this CPU (shared and global memory, "
       "warp races, async copies, missing fences; several schedules); \"gpu\": "
       "compute-sanitizer racecheck on a runner (shared memory, one schedule). Default: "
       "gpu when a GPU runner is configured, else sim"}};
  return properties;
}

}  // namespace

mcp::Tool make_racecheck_tool(std::shared_ptr<CandidateCompiler> compiler,
                              std::shared_ptr<GpuJobs> jobs, SimulateToolConfig sim) {
  mcp::Tool tool;
  tool.name = "racecheck";
  tool.title = "Find data races in a candidate";
  tool.description =
      "Find read-after-write, write-after-read and write-after-write hazards between threads: "
      "a missing __syncthreads between a tile's store and other threads' loads, a reused buffer "
      "without a barrier, lanes exchanging data without __syncwarp, cp.async or TMA data read "
      "before its wait, CTAs writing the same global address, a flag published without a "
      "fence. engine \"sim\" runs the task's sim workloads under kiln's race detector on this "
      "CPU, under several warp schedules (no GPU needed); \"gpu\" runs compute-sanitizer "
      "racecheck on one workload on a GPU runner (shared memory only). Each finding names both "
      "accesses with their .cu lines and how to order them. Pass `candidate` (a kernel.cu path) "
      "or `source` (the code).";
  tool.input_schema = check_input_schema(sim_properties());
  tool.output_schema = check_report_schema();
  tool.annotations = {
      .read_only = true, .destructive = false, .idempotent = true, .open_world = true};
  tool.handler = [compiler, jobs, sim](const json& arguments, mcp::CallContext& context) {
    const std::string engine = arguments.value(
        "engine",
        jobs->has_runner() && !tasks::is_zoo_task_name(arguments.value("task", std::string()))
            ? std::string("gpu")
            : std::string("sim"));
    auto candidate = compiler->candidate(arguments);
    if (!candidate)
      return check_refusal(engine, mcp::ErrorCode::kInvalidArguments, candidate.error().message);
    if (engine == "gpu")
      return with_candidate_note(run_gpu_check(*jobs, *candidate, arguments, "racecheck", context),
                                 *candidate);
    auto task = jobs->task(arguments.value("task", std::string()));
    if (!task) return check_refusal("sim", mcp::ErrorCode::kInvalidArguments, task.error().message);
    return with_candidate_note(run_sim_racecheck(sim, **task, *candidate, arguments, context),
                               *candidate);
  };
  return tool;
}

}  // namespace kiln::tools
