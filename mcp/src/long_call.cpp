#include "kiln/mcp/long_call.h"

#include <cmath>
#include <cstdio>

namespace kiln::mcp {

using json = nlohmann::json;

namespace {

std::string whole_seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f", std::floor(s));
  return text;
}

// The tool's outputSchema with the running answer's fields beside its own; its required set
// becomes "the tool's fields, or the running answer's".
Result<json> with_running_shape(json schema) {
  json& properties = schema["properties"];
  if (!properties.is_object()) properties = json::object();
  const json running = running_properties();
  for (const auto& [name, property] : running.items()) {
    auto own = properties.find(name);
    if (own == properties.end()) {
      properties[name] = property;
    } else if (name == "status" || name == "job_id") {
      // A tool's own status or job id (a GPU job's) shares the name: the types must agree.
      if (own->value("type", "") != "string")
        return make_error("outputSchema's `" + name + "` must be a string to share the name");
      if (name == "status" && own->contains("enum")) (*own)["enum"].push_back("running");
    } else {
      return make_error("outputSchema declares `" + name +
                        "`, which the running answer of a long call uses");
    }
  }
  if (auto required = schema.find("required"); required != schema.end()) {
    if (!required->is_array() || !required->empty())
      schema["anyOf"] =
          json::array({{{"required", *required}}, {{"required", running_required()}}});
    schema.erase("required");
  }
  return schema;
}

json wait_s_schema(const WaitBudget& budget) {
  return json{
      {"type", "number"},
      {"minimum", 0},
      {"maximum", budget.max_s},
      {"description", "seconds to wait for the result (default " + whole_seconds(budget.default_s) +
                          "); when the work takes longer the call answers status "
                          "\"running\" with a job_id, and wait_job returns the result"}};
}

}  // namespace

json running_properties() {
  return json{
      {"status",
       {{"type", "string"},
        {"description", "\"running\": the work goes on; call next_call for its result"}}},
      {"job_id", {{"type", "string"}}},
      {"tool", {{"type", "string"}, {"description", "the tool whose work this is"}}},
      {"elapsed_s", {{"type", "number"}}},
      {"next_call",
       {{"type", "object"},
        {"properties", {{"name", {{"type", "string"}}}, {"arguments", {{"type", "object"}}}}}}}};
}

json running_required() { return json::array({"status", "job_id", "next_call"}); }

ToolResult job_answer(const JobStatus& status) {
  if (status.state == JobState::kDone && status.result) return *status.result;
  if (status.state == JobState::kLost)
    return ToolResult::error(ErrorCode::kRunFailed,
                             "job " + status.id + " (" + status.tool +
                                 ") was still running when the kiln process that ran it ended, "
                                 "so it has no result",
                             "call " + status.tool + " again");
  const json next{{"name", "wait_job"}, {"arguments", {{"job_id", status.id}}}};
  ToolResult result;
  result.structured = json{{"status", "running"},
                           {"job_id", status.id},
                           {"tool", status.tool},
                           {"elapsed_s", std::floor(status.elapsed_s * 10) / 10},
                           {"next_call", next}};
  result.text = status.tool + " is still running after " + whole_seconds(status.elapsed_s) +
                " s (job " + status.id + "); the work goes on. For its result call wait_job with " +
                next["arguments"].dump() +
                ": it waits for it within wait_s and answers like this while the work runs.";
  return result;
}

Result<Tool> with_wait_budget(Tool tool, std::shared_ptr<JobStore> jobs, WaitBudget budget) {
  const std::string who = "tool `" + tool.name + "`: ";
  if (tool.input_schema["properties"].contains("wait_s"))
    return make_error(who + "declares wait_s itself");
  tool.input_schema["properties"]["wait_s"] = wait_s_schema(budget);
  auto output = with_running_shape(tool.output_schema);
  if (!output) return make_error(who + output.error().message);
  tool.output_schema = std::move(*output);
  // A client of the tasks extension gets a task instead of wait_s and wait_job (tasks.h).
  tool.task_support = TaskSupport::kOptional;
  auto work = tool.handler;
  tool.handler = [work, jobs, budget, name = tool.name](const json& arguments,
                                                        CallContext& context) -> ToolResult {
    json own = arguments;
    const double wait_s = own.value("wait_s", budget.default_s);
    own.erase("wait_s");
    if (!context.may_background()) return work(own, context);
    auto id = jobs->start(name, [work, own](CallContext& job) { return work(own, job); });
    if (!id)
      return ToolResult::error(ErrorCode::kUnavailable, id.error().message,
                               "wait for a running call with wait_job, then call again");
    const auto wait =
        std::chrono::milliseconds(static_cast<int64_t>(std::min(wait_s, budget.max_s) * 1000));
    std::optional<JobStatus> status = jobs->wait(*id, wait, context);
    if (context.cancelled() || !status) {
      // The client gave up on this call before it became a job of its own: its work stops too.
      jobs->discard(*id);
      return ToolResult::error(ErrorCode::kRunFailed, "cancelled by the client");
    }
    if (status->state == JobState::kDone) {
      jobs->discard(*id);
      return job_answer(*status);
    }
    jobs->keep(*id);
    return job_answer(*status);
  };
  return tool;
}

}  // namespace kiln::mcp
