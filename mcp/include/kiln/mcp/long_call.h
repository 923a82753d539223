// Long tool calls that no client timeout loses: a tool wrapped here takes an optional `wait_s`
// budget; when its work is not done within it, the call answers `status: "running"` with a
// `job_id`, the work goes on as a job (job_store.h), and `wait_job` (tools/src/wait_job.cpp)
// returns the finished result for that id.
#pragma once

#include <memory>

#include "kiln/base/result.h"
#include "kiln/mcp/job_store.h"
#include "kiln/mcp/tool.h"

namespace kiln::mcp {

struct WaitBudget {
  double default_s = 45;  // under the 60 s that the TypeScript SDK and Codex time out at
  double max_s = 3600;
};

// `tool` with `wait_s` in its inputSchema and the running shape in its outputSchema (status
// "running", job_id, tool, elapsed_s, next_call; an enum of `status` gains "running"). Its
// handler runs as a job and waits for it within wait_s when the context may_background(); other
// contexts (`kiln call`) run it in place and wait for the whole work. A cancellation while the
// call waits cancels the work; once the call answered "running", only the job's own result ends
// it. Refused when the tool's outputSchema declares tool, elapsed_s or next_call itself.
Result<Tool> with_wait_budget(Tool tool, std::shared_ptr<JobStore> jobs, WaitBudget budget = {});

// What a call answers for a job: its finished result, the running answer (isError false), or,
// for a job whose kiln process ended before it finished, a run_failed error.
ToolResult job_answer(const JobStatus& status);

// The properties and the required set of the running answer, for outputSchemas (wait_job's).
nlohmann::json running_properties();
nlohmann::json running_required();

}  // namespace kiln::mcp
