#include "check_report_output.h"

#include <algorithm>
#include <sstream>

#include "kiln/tools/candidate_source.h"
#include "kiln/tools/task_source.h"

namespace kiln::tools {

using json = nlohmann::json;

mcp::ToolResult check_report_result(const check::CheckReport& report,
                                    const CheckOutputOptions& options) {
  const size_t total = report.findings.size();
  const size_t begin = std::min(options.offset, total);
  const size_t end = std::min(total, begin + options.limit);
  json findings = json::array();
  for (size_t i = begin; i < end; ++i) findings.push_back(check::to_json(report.findings[i]));
  size_t errors = 0;
  for (const check::Finding& f : report.findings) errors += f.severity == check::Severity::Error;

  mcp::ToolResult out;
  out.structured = {{"engine", options.engine}, {"verdict", check::verdict_name(report.verdict)},
                    {"findings", findings},     {"findings_total", total},
                    {"errors", errors},         {"offset", begin},
                    {"notes", report.notes}};
  for (const auto& [key, value] : options.extra.items()) out.structured[key] = value;
  // Findings are the check working: the result is not isError (README.md, "Tool results").

  std::ostringstream text;
  text << options.tool << " (" << options.engine << ", " << options.where
       << "): " << check::verdict_name(report.verdict);
  if (total > 0) text << ", " << total << " finding(s), " << errors << " error(s)";
  text << "\n";
  for (size_t i = begin; i < end; ++i) {
    const check::Finding& f = report.findings[i];
    text << check::to_string(f) << "\n";
    if (!f.instruction.empty()) text << "  at: " << f.instruction << "\n";
    text << "  fix: " << f.fix_hint << "\n";
  }
  if (end < total) {
    text << "... " << total - end << " more: call again with offset " << end << "\n";
  }
  for (const std::string& note : report.notes) text << "note: " << note << "\n";
  if (report.verdict == check::Verdict::Clean) {
    text << "next: nothing found"
         << (options.engine == "static"
                 ? "; the static engine sees what the PTX shows for every thread, the gpu "
                   "engine (compute-sanitizer) what one run does"
                 : "")
         << "\n";
  }
  out.text = text.str();
  return out;
}

json check_input_schema(const json& extra_properties) {
  json properties = {
      {"task",
       {{"type", "string"},
        {"pattern", kTaskNamePattern},
        {"description", "task name; default: this run's task"}}},
      {"workload",
       {{"type", "string"},
        {"description", "GPU run: the workload to run; default: the smallest"}}},
      {"limit",
       {{"type", "integer"},
        {"minimum", 1},
        {"maximum", 200},
        {"description", "findings to return (default 20)"}}},
      {"offset", {{"type", "integer"}, {"minimum", 0}, {"description", "findings to skip"}}}};
  for (const auto& [name, schema] : extra_properties.items()) properties[name] = schema;
  json schema{{"type", "object"}, {"properties", properties}, {"additionalProperties", false}};
  add_candidate_properties(schema, LegacyPath::kAccepted);
  return schema;
}

mcp::ToolResult check_refusal(const std::string& engine, mcp::ErrorCode code,
                              const std::string& message, const std::string& next_step) {
  mcp::ToolResult result = mcp::ToolResult::error(code, message, next_step);
  result.structured["engine"] = engine;
  return result;
}

json check_report_schema() {
  return json{{"type", "object"},
              {"properties",
               {{"engine", {{"type", "string"}}},
                {"verdict", {{"type", "string"}, {"enum", {"clean", "findings", "incomplete"}}}},
                {"findings", {{"type", "array"}, {"items", {{"type", "object"}}}}},
                {"findings_total", {{"type", "integer"}}},
                {"errors", {{"type", "integer"}}},
                {"offset", {{"type", "integer"}}},
                {"notes", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                {"arch", {{"type", "string"}}},
                {"compile", {{"type", "object"}}},
                {"job_id", {{"type", "string"}}},
                {"runner", {{"type", "string"}}},
                {"schedules", {{"type", "integer"}}},
                {"seed", {{"type", "integer"}}},
                {"exploration", {{"type", "object"}}},
                {"coverage", {{"type", "object"}}}}},
              {"required", {"engine"}}};
}

}  // namespace kiln::tools
