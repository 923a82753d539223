#include "sanitize_engine.h"

#include "check_report_output.h"
#include "kiln/check/sanitizer_findings.h"

namespace kiln::tools {

Result<SanitizeRun> run_sanitizer(GpuJobs& jobs, const tasks::Task& task,
                                  const Candidate& candidate, const std::string& tool,
                                  const std::string& workload, mcp::CallContext& context) {
  runner::JobSpec spec;
  spec.kind = runner::JobKind::kSanitize;
  spec.candidate_source = candidate.source;
  spec.sanitize_tools = {tool};
  spec.sanitize_workload = workload;
  auto job = jobs.run(task, spec, candidate, context, 1);
  if (!job) return job.error();
  SanitizeRun run;
  run.job_id = job->job_id;
  run.runner = job->runner;
  run.status = job->state == "cancelled" ? "cancelled" : job->result.value("status", "error");
  const nlohmann::json sanitize = job->result.value("sanitize", nlohmann::json::object());
  run.workload = sanitize.value("workload", workload);
  run.report = check::report_from_sanitizer(sanitize.value("tools", nlohmann::json::array()), tool);
  // A job that broke before the sanitizer ran (build error, bad launch) says why.
  if (run.status == "error" || run.status == "cancelled" ||
      (run.status == "failed" && run.report.findings.empty())) {
    run.error = job->result.value("error", "the sanitize job did not finish");
    run.stage = run.status == "cancelled" ? "cancelled" : job->result.value("stage", "?");
    run.report.notes.push_back("the " + tool + " job stopped in stage " + run.stage + ": " +
                               run.error);
    run.report.finish();
  }
  return run;
}

mcp::ToolResult run_gpu_check(GpuJobs& jobs, const Candidate& candidate,
                              const nlohmann::json& arguments, const std::string& tool,
                              mcp::CallContext& context) {
  auto task = jobs.runner_task(arguments.value("task", ""), tool + " engine gpu");
  if (!task) return check_refusal("gpu", mcp::ErrorCode::kNotFound, task.error().message);
  auto run = run_sanitizer(jobs, **task, candidate, tool, arguments.value("workload", ""), context);
  if (!run) return check_refusal("gpu", mcp::ErrorCode::kNoRunner, run.error().message);
  CheckOutputOptions output;
  output.tool = tool;
  output.engine = "gpu";
  output.where = "compute-sanitizer, workload " + run->workload + ", job " + run->job_id + " on " +
                 run->runner;
  output.limit = arguments.value("limit", size_t{20});
  output.offset = arguments.value("offset", size_t{0});
  output.extra = {{"job_id", run->job_id}, {"runner", run->runner}};
  mcp::ToolResult result = check_report_result(run->report, output);
  // A job that stopped before the sanitizer could judge the candidate: the check did not run.
  if (!run->error.empty())
    result.fail(run->stage == "build" ? mcp::ErrorCode::kCompileError : mcp::ErrorCode::kRunFailed,
                "the " + tool + " job stopped in stage " + run->stage + ": " + run->error);
  return result;
}

}  // namespace kiln::tools
