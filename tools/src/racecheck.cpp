// racecheck: shared- and global-memory hazards (RAW, WAR, WAW between threads) in a candidate,
// found by compute-sanitizer's racecheck on a runner. (The dynamic engine on the CPU simulator
// is issue 5's next step; until then racecheck needs a GPU runner.)
#include "check_report_output.h"
#include "kiln/tools/tool_factories.h"
#include "sanitize_engine.h"

namespace kiln::tools {

using json = nlohmann::json;

mcp::Tool make_racecheck_tool(std::shared_ptr<CandidateCompiler> compiler,
                              std::shared_ptr<GpuJobs> jobs) {
  mcp::Tool tool;
  tool.name = "racecheck";
  tool.title = "Find data races in a candidate";
  tool.description =
      "Find read-after-write, write-after-read and write-after-write hazards between threads on "
      "shared memory (a missing __syncthreads between a tile's store and other threads' "
      "loads, a reused buffer without a barrier) by running compute-sanitizer racecheck on "
      "one workload on a GPU runner. Each finding names the kernel, the .cu line of one access "
      "and the other, and how to order them. Needs a GPU runner (KILN_RUNNER or a local "
      "GPU); use synccheck first, it needs none.";
  tool.input_schema = json{
      {"type", "object"},
      {"properties",
       {{"path",
         {{"type", "string"},
          {"description", "kernel.cu path: relative to the run directory, or inside the task "
                          "bundles"}}},
        {"source", {{"type", "string"}, {"description", "the kernel.cu source inline"}}},
        {"task",
         {{"type", "string"},
          {"pattern", "^[a-z0-9_]+$"},
          {"description", "task name; default: this run's task"}}},
        {"workload",
         {{"type", "string"},
          {"description", "the workload to run; default: the smallest"}}},
        {"limit",
         {{"type", "integer"}, {"minimum", 1}, {"maximum", 200},
          {"description", "findings to return (default 20)"}}},
        {"offset", {{"type", "integer"}, {"minimum", 0}, {"description", "findings to skip"}}}}},
      {"additionalProperties", false}};
  tool.output_schema = check_report_schema();
  tool.annotations = {
      .read_only = true, .destructive = false, .idempotent = true, .open_world = true};
  tool.handler = [compiler, jobs](const json& arguments, mcp::CallContext& context) {
    auto fail = [](const std::string& message) {
      mcp::ToolResult result;
      result.structured = json{{"engine", "gpu"}, {"error", message}};
      result.text = message;
      result.is_error = true;
      return result;
    };
    auto candidate = compiler->candidate(arguments);
    if (!candidate) return fail(candidate.error().message);
    auto task = jobs->task(arguments.value("task", ""));
    if (!task) return fail(task.error().message);
    auto run = run_sanitizer(*jobs, **task, *candidate, "racecheck",
                             arguments.value("workload", ""), context);
    if (!run) return fail(run.error().message);
    CheckOutputOptions output;
    output.tool = "racecheck";
    output.engine = "gpu";
    output.where = "compute-sanitizer, workload " + run->workload + ", job " + run->job_id +
                   " on " + run->runner;
    output.limit = arguments.value("limit", size_t{20});
    output.offset = arguments.value("offset", size_t{0});
    output.extra = {{"job_id", run->job_id}, {"runner", run->runner}};
    if (!run->error.empty()) output.extra["error"] = run->error;
    return check_report_result(run->report, output);
  };
  return tool;
}

}  // namespace kiln::tools
