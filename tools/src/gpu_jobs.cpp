#include "kiln/tools/gpu_jobs.h"

#include <algorithm>

#include "kiln/frontier/live_log.h"

namespace kiln::tools {

using json = nlohmann::json;

namespace {

std::string event_message(const json& event) {
  const std::string type = event.value("event", "");
  if (type == "stage") return "stage " + event.value("stage", "?");
  if (type == "state") {
    const std::string state = event.value("state", "");
    if (state == "queued")
      return "queued, " + std::to_string(event.value("position", 0)) + " job(s) ahead";
    if (state == "running") return "running on GPU " + std::to_string(event.value("gpu", 0));
    return state;
  }
  if (type == "progress") {
    std::string text = "workload";
    if (event.contains("workload")) text += " " + event.value("workload", "");
    if (event.contains("index") && event.contains("total"))
      text += " (" + std::to_string(event.value("index", 0)) + "/" +
              std::to_string(event.value("total", 0)) + ")";
    if (event.contains("message")) text += ": " + event.value("message", "");
    return text;
  }
  return event.value("message", "");
}

constexpr size_t kMaxLogChars = 1500;

// The RESULT for structuredContent: logs and mismatch lists trimmed to stay small.
json compact(json result) {
  if (result.contains("build") && result["build"].is_object() && result["build"].contains("log") &&
      result["build"]["log"].is_string())
    result["build"]["log"] = clip_tail(result["build"]["log"].get<std::string>(), kMaxLogChars);
  if (result.contains("log_tail") && result["log_tail"].is_string())
    result["log_tail"] = clip_tail(result["log_tail"].get<std::string>(), kMaxLogChars);
  if (result.contains("workloads") && result["workloads"].is_array()) {
    for (auto& row : result["workloads"]) {
      if (!row.is_object() || !row.contains("errors") || !row["errors"].is_object()) continue;
      json& errors = row["errors"];
      if (errors.contains("first_mismatches") && errors["first_mismatches"].is_array() &&
          errors["first_mismatches"].size() > 3)
        errors["first_mismatches"].erase(errors["first_mismatches"].begin() + 3,
                                         errors["first_mismatches"].end());
    }
  }
  return result;
}

}  // namespace

std::string clip_tail(const std::string& text, size_t max) {
  return text.size() <= max ? text : "…" + text.substr(text.size() - max);
}

nlohmann::json job_output_schema(const nlohmann::json& properties) {
  nlohmann::json all = {
      {"result_id", {{"type", "string"}}},
      {"job_id", {{"type", "string"}}},
      {"runner", {{"type", "string"}}},
      {"status", {{"type", "string"}, {"enum", {"passed", "failed", "error", "cancelled"}}}},
      {"stage", {{"type", "string"}}},
      {"store_error", {{"type", "string"}}}};
  all.update(properties);
  return {{"type", "object"}, {"properties", all}, {"required", {"status"}}};
}

namespace {

// Why a job's candidate got no verdict, or a failing one: the stage or the failed gates, the
// workloads that passed, and the RESULT's own error.
std::string failure_message(const json& result) {
  const std::string status = result.value("status", "error");
  if (status == "cancelled") return "cancelled: nothing was measured";
  std::string out = status == "error"
                        ? "the job stopped in stage " + result.value("stage", std::string("?"))
                        : std::string("the candidate failed");
  std::string gates;
  for (const auto& gate : result.value("gates", json::array()))
    if (gate.is_object() &&
        gate.value("state", gate.value("passed", false) ? "passed" : "failed") == "failed")
      gates += (gates.empty() ? "" : ", ") + gate.value("name", std::string("?"));
  if (!gates.empty()) out += " gate(s) " + gates;
  const json summary = result.value("summary", json::object());
  if (summary.contains("passed") && summary.contains("total"))
    out += " (" + summary["passed"].dump() + "/" + summary["total"].dump() + " workloads passed)";
  if (result.contains("error") && result["error"].is_string())
    out += ": " + result["error"].get<std::string>();
  return out;
}

mcp::ErrorCode failure_code(const json& result) {
  const std::string status = result.value("status", "error");
  if (status == "failed") return mcp::ErrorCode::kWrongAnswer;
  if (status == "error" && result.value("stage", "") == "build")
    return mcp::ErrorCode::kCompileError;
  return mcp::ErrorCode::kRunFailed;
}

}  // namespace

mcp::ToolResult to_tool_result(const GpuJobResult& job, std::string text,
                               const std::string& next_step) {
  mcp::ToolResult out;
  out.structured = compact(job.result);
  // The RESULT's error string becomes the message of the shared error object.
  out.structured.erase("error");
  out.structured["job_id"] = job.job_id;
  out.structured["runner"] = job.runner;
  if (!job.result_id.empty()) out.structured["result_id"] = job.result_id;
  out.text = std::move(text);
  if (job.state == "cancelled") {
    out.structured["status"] = "cancelled";
    out.text = "cancelled: job " + job.job_id + " was stopped on runner " + job.runner +
               "; nothing was measured\n";
  }
  if (!job.store_error.empty()) {
    out.structured["store_error"] = job.store_error;
    out.text += "not stored: " + job.store_error + "\n";
  }
  if (out.structured.value("status", "error") != "passed") {
    json failed = job.result;
    if (job.state == "cancelled") failed["status"] = "cancelled";
    out.fail(failure_code(failed), failure_message(failed), next_step);
  }
  return out;
}

GpuJobs::GpuJobs(std::shared_ptr<TaskSource> tasks, GpuJobsConfig config)
    : tasks_(std::move(tasks)), config_(std::move(config)), selector_(config_.runner) {}

Result<std::shared_ptr<const tasks::Task>> GpuJobs::task(const std::string& name) {
  auto task = tasks_->get(name);
  if (task) return task;
  // TaskSource speaks for get_task, whose argument is `name`; these tools call it `task`.
  std::string message = task.error().message;
  if (auto at = message.find("with `name`"); at != std::string::npos)
    message.replace(at, 11, "with `task`");
  return make_error(message);
}

Result<std::shared_ptr<const tasks::Task>> GpuJobs::runner_task(const std::string& name,
                                                                const std::string& tool) {
  auto found = task(name);
  if (!found || !(*found)->from_zoo()) return found;
  return make_error(tool + " does not take " + (*found)->name +
                    ": a zoo task is a correctness contract for the CPU tools (simulate, "
                    "synccheck and racecheck with engine sim, compile), with no baseline to "
                    "time against; on a GPU, benchmark a bundled task (get_task lists them)");
}

Result<Candidate> GpuJobs::candidate(const json& arguments) const {
  return resolve_candidate(arguments, config_.roots);
}

Result<frontier::ResultStore*> GpuJobs::store() {
  std::lock_guard lock(store_mutex_);
  if (!store_) {
    auto opened = frontier::ResultStore::open(config_.results_db);
    if (!opened) return opened.error();
    store_ = std::move(opened).value();
  }
  return store_.get();
}

Result<GpuJobResult> GpuJobs::run(const tasks::Task& task, const runner::JobSpec& spec,
                                  const Candidate& candidate, mcp::CallContext& context,
                                  size_t total, bool log_evaluation) {
  auto body = runner::make_job_body(task, spec);
  if (!body) return body.error();
  auto choice = selector_.choose();
  if (!choice) return choice.error();

  double done = 0;
  runner::RunCallbacks callbacks;
  callbacks.cancelled = [&context] { return context.cancelled(); };
  callbacks.on_event = [&](const json& event) {
    const std::string type = event.value("event", "");
    if (type == "log") {
      const std::string level = event.value("level", "info");
      context.log(level == "error"     ? mcp::LogLevel::kError
                  : level == "warning" ? mcp::LogLevel::kWarning
                                       : mcp::LogLevel::kInfo,
                  "runner", event.value("message", ""));
      return;
    }
    // Progress must increase: workloads count whole steps, other events a sliver; once
    // at the total, later events (stage done, finished) are not worth a notification.
    double next = done + 0.001;
    if (type == "progress" && event.contains("index") && event["index"].is_number())
      next = std::max(next, event["index"].get<double>());
    if (total > 0 && next > static_cast<double>(total)) return;
    done = next;
    context.progress(done,
                     total > 0 ? std::optional<double>(static_cast<double>(total)) : std::nullopt,
                     event_message(event));
  };
  auto outcome = choice->client.run(*body, callbacks);
  if (!outcome) return outcome.error();

  GpuJobResult out;
  out.result = outcome->result;
  out.state = outcome->state;
  out.job_id = outcome->job_id;
  out.runner = choice->label;
  if (out.state == "cancelled") return out;  // nothing was measured
  auto opened = store();
  if (!opened) {
    out.store_error = opened.error().message;
    return out;
  }
  frontier::NewResult record;
  record.kind = std::string(runner::kind_name(spec.kind));
  record.task_name = task.name;
  record.task_sha256 = task.sha256;
  record.candidate_source = candidate.source;
  record.source_path = candidate.path;
  record.runner = out.runner;
  record.job_id = out.job_id;
  record.result = out.result;
  auto stored = (*opened)->insert(record);
  if (!stored) {
    out.store_error = stored.error().message;
    return out;
  }
  out.result_id = stored->id;
  if (log_evaluation && spec.kind == runner::JobKind::kBenchmark && !config_.live_log.empty())
    (void)frontier::append_line(config_.live_log, frontier::evaluation_line(*stored, "benchmark"));
  return out;
}

}  // namespace kiln::tools
