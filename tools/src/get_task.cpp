// get_task: the contract of the task this run optimizes.
#include <sstream>

#include "kiln/tasks/task.h"
#include "kiln/tools/task_source.h"
#include "kiln/tools/tool_factories.h"

namespace kiln::tools {

using json = nlohmann::json;

namespace {

std::string shape_text(const tasks::TensorSpec& tensor) {
  std::string out = tensor.name + " " + tensor.dtype + "[";
  for (size_t i = 0; i < tensor.shape.size(); ++i) out += (i ? "," : "") + tensor.shape[i];
  return out + "]";
}

// The same facts as the structured result, compactly, for text-only clients.
std::string summary(const tasks::Task& task) {
  std::ostringstream out;
  out << task.name << ": " << task.title << "\n";
  out << "arch " << task.arch << "; task sha256 " << task.sha256.substr(0, 16) << "...\n";
  out << "inputs:";
  for (const auto& t : task.tensors)
    if (!t.is_output) out << " " << shape_text(t);
  out << "\noutputs:";
  for (const auto& t : task.tensors)
    if (t.is_output) out << " " << shape_text(t);
  out << "\nworkloads (" << task.workloads.size() << "):";
  for (const auto& w : task.workloads) out << " " << w.name;
  out << "\nsim_workloads (" << task.sim_workloads.size() << "):";
  for (const auto& w : task.sim_workloads) out << " " << w.name;
  out << "\ntolerance: atol " << task.tolerance.atol << ", rtol " << task.tolerance.rtol
      << ", max mismatch fraction " << task.tolerance.max_mismatch_fraction << "\n";
  out << "baseline: " << task.baseline_name << "\n";
  out << "scoring: geometric mean of baseline_time / candidate_time over all workloads; one failed "
         "workload fails the candidate\n";
  if (!task.banned_symbols.empty()) {
    out << "banned symbols:";
    for (const auto& s : task.banned_symbols) out << " " << s;
    out << "\n";
  }
  for (const auto& rule : task.rules) out << "rule: " << rule << "\n";
  out << "host synchronization inside kiln_launch: "
      << (task.allow_host_sync ? "allowed" : "forbidden (fails the hidden_stream_work gate)")
      << "\n";
  out << "starter: " << task.starter_path.string() << "\n";
  out << "ABI: extern \"C\" int kiln_launch(const kiln_tensor*, int, const kiln_scalar*, int, "
         "cudaStream_t) from kiln/abi.h\n";
  return out.str();
}

}  // namespace

mcp::Tool make_get_task_tool(std::shared_ptr<TaskSource> source) {
  mcp::Tool tool;
  tool.name = "get_task";
  tool.title = "Get the task contract";
  tool.description =
      "The contract of the task this run optimizes: the kernel signature (tensors in ABI order "
      "with dtypes and "
      "shape expressions), the timed workloads and the small sim_workloads for the CPU simulator, "
      "tolerances, "
      "baseline, scoring rule, rules and banned symbols, the starter kernel's path and the task "
      "hash. Call it "
      "first, and again whenever unsure what counts as correct or how speed is scored. `name` "
      "selects a task "
      "when several exist.";
  tool.input_schema = json{{"type", "object"},
                           {"properties",
                            {{"name",
                              {{"type", "string"},
                               {"pattern", kTaskNamePattern},
                               {"description", "task name; default: this run's task"}}}}},
                           {"additionalProperties", false}};
  json string_array = {{"type", "array"}, {"items", {{"type", "string"}}}};
  tool.output_schema =
      json{{"type", "object"},
           {"properties",
            {{"name", {{"type", "string"}}},
             {"title", {{"type", "string"}}},
             {"description", {{"type", "string"}}},
             {"arch", {{"type", "string"}}},
             {"dims", string_array},
             {"signature", {{"type", "object"}}},
             {"workloads", {{"type", "array"}, {"items", {{"type", "object"}}}}},
             {"sim_workloads", {{"type", "array"}, {"items", {{"type", "object"}}}}},
             {"tolerance", {{"type", "object"}}},
             {"flops", {{"type", "string"}}},
             {"bytes", {{"type", "string"}}},
             {"baseline", {{"type", "object"}}},
             {"scoring", {{"type", "object"}}},
             {"banned_symbols", string_array},
             {"rules", string_array},
             {"allow_host_sync", {{"type", "boolean"}}},
             {"files", {{"type", "object"}}},
             {"sha256", {{"type", "string"}}}}},
           {"required",
            {"name", "signature", "workloads", "sim_workloads", "tolerance", "scoring", "files",
             "sha256"}}};
  tool.annotations = {
      .read_only = true, .destructive = false, .idempotent = true, .open_world = false};
  tool.handler = [source](const json& arguments, mcp::CallContext&) {
    auto task = source->get(arguments.value("name", ""));
    if (!task) return mcp::ToolResult::error(mcp::ErrorCode::kNotFound, task.error().message);
    mcp::ToolResult result;
    result.structured = tasks::to_json(**task);
    result.text = summary(**task);
    return result;
  };
  return tool;
}

}  // namespace kiln::tools
