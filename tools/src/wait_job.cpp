// wait_job: the finished result of a long call that answered status "running" (benchmark,
// profile, simulate, synccheck, racecheck), or the same running answer while its work goes on.
#include "kiln/mcp/long_call.h"
#include "kiln/tools/tool_factories.h"

namespace kiln::tools {

using json = nlohmann::json;

mcp::Tool make_wait_job_tool(std::shared_ptr<mcp::JobStore> jobs, mcp::WaitBudget budget) {
  mcp::Tool tool;
  tool.name = "wait_job";
  tool.title = "Wait for a long call's result";
  tool.description =
      "The result of a long call (benchmark, profile, simulate, synccheck, racecheck) that "
      "answered status \"running\" with a job_id because its work outlasted its wait_s: waits "
      "up to wait_s for the work, then returns exactly what the tool would have returned, or "
      "the same running answer while the work goes on (call again). Results outlive the "
      "session: with --run-dir they are kept in RUN/jobs/ for later kiln processes too.";
  tool.input_schema =
      json{{"type", "object"},
           {"properties",
            {{"job_id",
              {{"type", "string"},
               {"pattern", "^job-[0-9a-f]{16}$"},
               {"description", "the job_id of a running answer"}}},
             {"wait_s",
              {{"type", "number"},
               {"minimum", 0},
               {"maximum", budget.max_s},
               {"description", "seconds to wait for the work (default " +
                                   std::to_string(static_cast<int>(budget.default_s)) + ")"}}}}},
           {"required", {"job_id"}},
           {"additionalProperties", false}};
  // Whatever the tool of the job returns, or the running answer: the running fields typed,
  // the tool's own left open.
  tool.output_schema = json{{"type", "object"}, {"properties", mcp::running_properties()}};
  tool.annotations = {
      .read_only = true, .destructive = false, .idempotent = true, .open_world = false};
  tool.handler = [jobs, budget](const json& arguments, mcp::CallContext& context) {
    const std::string id = arguments["job_id"];
    const double wait_s = std::min(arguments.value("wait_s", budget.default_s), budget.max_s);
    auto status =
        jobs->wait(id, std::chrono::milliseconds(static_cast<int64_t>(wait_s * 1000)), context);
    if (!status)
      return mcp::ToolResult::error(
          mcp::ErrorCode::kNotFound,
          "no job `" + id + "`: kiln keeps the newest " + std::to_string(jobs->limits().max_kept) +
              " background jobs (in RUN/jobs/ with --run-dir; without one, only while this kiln "
              "process runs)",
          "call the long tool again; pass the job_id of its running answer unchanged");
    return mcp::job_answer(*status);
  };
  return tool;
}

}  // namespace kiln::tools
