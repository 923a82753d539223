// What the GPU tools (benchmark, profile) share: where a candidate may come from (a
// file inside the run directory or the task bundles, or inline source: candidate_source.h), which
// runner takes the job,
// how its events become MCP progress, and the store every result goes into.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "kiln/base/result.h"
#include "kiln/frontier/result_store.h"
#include "kiln/mcp/call_context.h"
#include "kiln/mcp/tool.h"
#include "kiln/runner/job_body.h"
#include "kiln/runner/runner_selector.h"
#include "kiln/tools/candidate_source.h"
#include "kiln/tools/task_source.h"

namespace kiln::tools {

struct GpuJobsConfig {
  CandidateRoots roots;              // candidate paths must lie inside (the run dir, the tasks)
  std::filesystem::path results_db;  // the result store file
  runner::RunnerSettings runner;
  std::filesystem::path live_log;  // RUN/live.log: a line per stored benchmark; empty: none
};

// A finished job, stored.
struct GpuJobResult {
  nlohmann::json result;  // RESULT
  std::string state;      // finished | cancelled
  std::string job_id;
  std::string runner;     // "local" or the URL
  std::string result_id;  // empty when it could not be stored (store_error says why)
  std::string store_error;
};

// The tool result for a finished job: the RESULT (build log and mismatch lists trimmed)
// plus job_id, runner and result_id as structuredContent, `text` as text, and isError
// unless the candidate passed: then the shared `error` (code wrong_answer for a failed
// candidate, compile_error for a build that failed, run_failed for a job that stopped) holds
// the RESULT's error string, and `next_step` when given (else the code's default).
mcp::ToolResult to_tool_result(const GpuJobResult& job, std::string text,
                               const std::string& next_step = "");

// The outputSchema of a GPU tool: the fields every job result has (result_id, job_id,
// runner, status, stage, store_error) plus the tool's own `properties`.
nlohmann::json job_output_schema(const nlohmann::json& properties);

// The last `max` characters of `text`, marked when cut.
std::string clip_tail(const std::string& text, size_t max);

class GpuJobs {
 public:
  GpuJobs(std::shared_ptr<TaskSource> tasks, GpuJobsConfig config);

  // The task named by the tool's `task` argument, or the run's task when empty.
  Result<std::shared_ptr<const tasks::Task>> task(const std::string& name);
  // task(), refusing a zoo task (zoo:ID): it has no baseline, GPU reference or bundle to send a
  // runner, so `tool` (benchmark, profile, a gpu engine) cannot take it.
  Result<std::shared_ptr<const tasks::Task>> runner_task(const std::string& name,
                                                         const std::string& tool);

  // The candidate the call names (resolve_candidate over the configured roots).
  Result<Candidate> candidate(const nlohmann::json& arguments) const;

  // Whether a GPU runner is configured (a URL, or this machine's GPU with kiln-worker); the
  // check tools pick their default engine by it.
  bool has_runner() const { return !config_.runner.urls.empty() || config_.runner.local; }

  // Sends the job to a runner, reports its events as progress on `context`, cancels it
  // when the client cancels, and stores the RESULT. `total` is the workload count. A stored
  // benchmark gets a line in the live log unless `log_evaluation` is false (the frontier logs
  // its revalidation jobs itself).
  Result<GpuJobResult> run(const tasks::Task& task, const runner::JobSpec& spec,
                           const Candidate& candidate, mcp::CallContext& context, size_t total,
                           bool log_evaluation = true);

 private:
  Result<frontier::ResultStore*> store();

  std::shared_ptr<TaskSource> tasks_;
  GpuJobsConfig config_;
  runner::RunnerSelector selector_;
  std::mutex store_mutex_;
  std::unique_ptr<frontier::ResultStore> store_;
};

}  // namespace kiln::tools
