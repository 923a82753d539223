// The gpu engine of synccheck and racecheck: compute-sanitizer on a runner (a sanitize job,
// runner/protocol/PROTOCOL.md), its findings in kiln's format.
#pragma once

#include <string>

#include "kiln/check/finding.h"
#include "kiln/mcp/call_context.h"
#include "kiln/mcp/tool.h"
#include "kiln/tools/gpu_jobs.h"

namespace kiln::tools {

struct SanitizeRun {
  check::CheckReport report;
  std::string job_id;
  std::string runner;
  std::string workload;
  std::string status;  // the job's: passed | failed | error | cancelled
  std::string error;   // the job's error, when it could not check
  std::string stage;   // where it stopped, when it could not check ("build", ...)
};

// Runs compute-sanitizer `tool` ("synccheck", "racecheck") on `workload` (empty: the runner
// picks the smallest). An error means no runner could take the job.
Result<SanitizeRun> run_sanitizer(GpuJobs& jobs, const tasks::Task& task,
                                  const Candidate& candidate, const std::string& tool,
                                  const std::string& workload, mcp::CallContext& context);

// The whole gpu engine of a check tool: the task and workload from `arguments`, the sanitize
// job, and its report as the tool's result (limit/offset applied).
mcp::ToolResult run_gpu_check(GpuJobs& jobs, const Candidate& candidate,
                              const nlohmann::json& arguments, const std::string& tool,
                              mcp::CallContext& context);

}  // namespace kiln::tools
