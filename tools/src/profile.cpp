// profile: Nsight Compute on one workload of a candidate, on a GPU runner; the summary
// per kernel (duration, throughputs, occupancy, registers, shared memory, ...).
#include <cmath>
#include <cstdio>
#include <sstream>

#include "kiln/tools/task_source.h"
#include "kiln/tools/tool_factories.h"

namespace kiln::tools {

using json = nlohmann::json;

namespace {

constexpr size_t kMaxKernels = 20;
constexpr size_t kMaxNotes = 10;

// 12.5, "12.5 us" for {"value": 12.5, "unit": "us"}, or a string as is.
std::string metric_text(const json& value) {
  if (value.is_number_integer()) return value.dump();
  if (value.is_number()) {
    double number = value.get<double>();
    char text[64];
    std::snprintf(
        text, sizeof text,
        std::fabs(number) >= 1e6 || (number != 0 && std::fabs(number) < 1e-3) ? "%.4g" : "%.6g",
        number);
    return text;
  }
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("value")) {
    std::string out = metric_text(value["value"]);
    if (value.contains("unit") && value["unit"].is_string())
      out += " " + value["unit"].get<std::string>();
    return out;
  }
  return value.dump();
}

std::string profile_text(const json& result, const std::string& result_id, const std::string& job,
                         const std::string& runner) {
  std::ostringstream out;
  const json profile = result.value("profile", json::object());
  out << "profile " << (result_id.empty() ? "(not stored)" : result_id) << " (job " << job
      << ", runner " << runner << ")";
  if (result.value("status", "error") != "passed") {
    out << ": " << (result.value("status", "") == "failed" ? "FAILED" : "ERROR") << " in stage "
        << result.value("stage", "?") << "\n"
        << result.value("error", "") << "\n";
    if (result.contains("log_tail"))
      out << "worker log (tail):\n" << clip_tail(result.value("log_tail", ""), 1500) << "\n";
    return out.str();
  }
  const json kernels = profile.value("kernels", json::array());
  out << ": workload " << profile.value("workload", "?") << ", " << kernels.size() << " kernel(s)";
  if (profile.contains("ncu_version")) out << ", " << profile.value("ncu_version", "");
  out << "\n";
  size_t shown = 0;
  for (const auto& kernel : kernels) {
    if (++shown > kMaxKernels) {
      out << "… " << kernels.size() - kMaxKernels << " more kernels in structuredContent\n";
      break;
    }
    out << "kernel " << kernel.value("name", "?");
    if (kernel.contains("grid")) out << " grid " << metric_text(kernel["grid"]);
    if (kernel.contains("block")) out << " block " << metric_text(kernel["block"]);
    out << "\n";
    // Every other number or string the worker reports, then the metrics object, then stalls.
    std::string line;
    auto add = [&](const std::string& name, const json& value) {
      std::string item = name + " " + metric_text(value);
      if (!line.empty() && line.size() + item.size() > 96) {
        out << "  " << line << "\n";
        line.clear();
      }
      line += (line.empty() ? "" : " | ") + item;
    };
    for (const auto& [name, value] : kernel.items())
      if (name != "name" && name != "grid" && name != "block" &&
          (value.is_number() || value.is_string()))
        add(name, value);
    if (kernel.contains("metrics") && kernel["metrics"].is_object())
      for (const auto& [name, value] : kernel["metrics"].items()) add(name, value);
    if (!line.empty()) out << "  " << line << "\n";
    if (kernel.contains("top_stalls") && kernel["top_stalls"].is_array() &&
        !kernel["top_stalls"].empty()) {
      out << "  top stalls:";
      for (const auto& stall : kernel["top_stalls"])
        out << " " << stall.value("reason", "?") << " ("
            << metric_text(stall.value("warps_per_issue", json())) << ")";
      out << "\n";
    }
  }
  if (profile.contains("notes") && profile["notes"].is_array()) {
    size_t notes = 0;
    for (const auto& note : profile["notes"])
      if (note.is_string() && ++notes <= kMaxNotes)
        out << "note: " << note.get<std::string>() << "\n";
  }
  return out.str();
}

}  // namespace

mcp::Tool make_profile_tool(std::shared_ptr<GpuJobs> jobs) {
  mcp::Tool tool;
  tool.name = "profile";
  tool.title = "Profile a candidate with Nsight Compute";
  tool.description =
      "Run the candidate kernel.cu on one workload under Nsight Compute on a GPU runner and return "
      "the summary per "
      "kernel: duration, SM and memory throughput, achieved occupancy, registers, shared memory, "
      "and the profiler's "
      "notes. Use it after benchmark to find out why a kernel is slow (memory-bound, low "
      "occupancy, pipe stalls). "
      "Pass `candidate` (a kernel.cu path) or `source` (the code), and `workload` (default: "
      "the task's first).";
  tool.input_schema =
      json{{"type", "object"},
           {"properties",
            {{"workload",
              {{"type", "string"},
               {"description", "the workload to profile; default: the task's first"}}},
             {"task",
              {{"type", "string"},
               {"pattern", kTaskNamePattern},
               {"description", "task name; default: this run's task"}}}}},
           {"additionalProperties", false}};
  add_candidate_properties(tool.input_schema, LegacyPath::kRefused);
  tool.output_schema = job_output_schema({{"profile", {{"type", "object"}}}});
  tool.annotations = {
      .read_only = true, .destructive = false, .idempotent = false, .open_world = true};
  tool.handler = [jobs](const json& arguments, mcp::CallContext& context) {
    auto task = jobs->runner_task(arguments.value("task", ""), "profile");
    if (!task) return mcp::ToolResult::error(mcp::ErrorCode::kNotFound, task.error().message);
    auto candidate = jobs->candidate(arguments);
    if (!candidate)
      return mcp::ToolResult::error(mcp::ErrorCode::kInvalidArguments, candidate.error().message);
    runner::JobSpec spec;
    spec.kind = runner::JobKind::kProfile;
    spec.candidate_source = candidate->source;
    spec.profile_workload = arguments.value("workload", "");
    if (spec.profile_workload.empty() && !(*task)->workloads.empty())
      spec.profile_workload = (*task)->workloads.front().name;
    bool known = false;
    std::string names;
    for (const auto& workload : (*task)->workloads) {
      known = known || workload.name == spec.profile_workload;
      names += (names.empty() ? "" : ", ") + workload.name;
    }
    if (!known)
      return mcp::ToolResult::error(mcp::ErrorCode::kNotFound,
                                    "`" + spec.profile_workload + "` is not a workload of " +
                                        (*task)->name + "; the workloads are " + names);
    auto job = jobs->run(**task, spec, *candidate, context, 1);
    if (!job) return mcp::ToolResult::error(mcp::ErrorCode::kNoRunner, job.error().message);
    return to_tool_result(*job,
                          profile_text(job->result, job->result_id, job->job_id, job->runner));
  };
  return tool;
}

}  // namespace kiln::tools
