#include "kiln/mcp/tool_registry.h"

#include <regex>

#include "kiln/base/json_text.h"
#include "kiln/mcp/schema_validator.h"

namespace kiln::mcp {

using json = nlohmann::json;

namespace {

struct CodeInfo {
  ErrorCode code;
  const char* name;
  const char* next_step;  // the default: what an agent does about this kind of failure
};

constexpr CodeInfo kCodes[] = {
    {ErrorCode::kInvalidArguments, "invalid_arguments",
     "fix the argument the message names (tools/list gives this tool's inputSchema), then call "
     "again"},
    {ErrorCode::kNotFound, "not_found",
     "call again with a name that exists (the message lists the known ones where kiln knows "
     "them)"},
    {ErrorCode::kCompileError, "compile_error",
     "run compile on the candidate for every file:line diagnostic, fix them, then call again"},
    {ErrorCode::kWrongAnswer, "wrong_answer",
     "run simulate on the failing workload for the first mismatches and faults, fix the "
     "kernel, then call again"},
    {ErrorCode::kRunFailed, "run_failed",
     "fix what stopped the run (the message says: a kernel that loops, a crash in kiln_launch, "
     "a cancellation), then call again"},
    {ErrorCode::kNoRunner, "no_runner",
     "start `kiln runner --gpus 0` on a GPU machine and set KILN_RUNNER=http://HOST:8000, or "
     "serve kiln on a machine with a GPU"},
    {ErrorCode::kRefused, "refused",
     "read the reason; list_frontier shows what the decision was made against"},
    {ErrorCode::kUnavailable, "unavailable",
     "this is kiln's installation or configuration, not the call: fix what the message names, "
     "or report it"},
    {ErrorCode::kInternal, "internal_error",
     "this is a kiln bug: report it with the arguments you sent"},
    // No default: a bare failure's message is all it says (the conformance fixture's text is
    // checked word for word).
    {ErrorCode::kFailed, "failed", ""},
};

const CodeInfo& info(ErrorCode code) {
  for (const auto& entry : kCodes)
    if (entry.code == code) return entry;
  return kCodes[std::size(kCodes) - 1];
}

// The text of a failure: the message, then the next step unless the message already says it.
std::string failure_text(const json& error) {
  std::string text = error.value("message", "");
  const std::string next = error.value("next_step", "");
  if (!next.empty() && text.find(next) == std::string::npos)
    text += (text.empty() || text.back() == '\n' ? "" : "\n") + std::string("next: ") + next;
  return text;
}

// Every isError result carries the error object, and its text says the message and the next
// step: what a handler left out is filled in here, once for every tool.
ToolResult normalized(ToolResult result) {
  if (!result.is_error) return result;
  if (!result.structured.is_object()) result.structured = json::object();
  auto& error = result.structured["error"];
  if (!error.is_object() || !error.contains("code"))
    error = error_json(ErrorCode::kFailed, result.text.empty() ? "the call failed" : result.text);
  const std::string message = error.value("message", "");
  const std::string next = error.value("next_step", "");
  if (result.text.find(message) == std::string::npos) {
    if (!result.text.empty() && result.text.back() != '\n') result.text += "\n";
    result.text += message;
  }
  if (!next.empty() && result.text.find(next) == std::string::npos) {
    if (!result.text.empty() && result.text.back() != '\n') result.text += "\n";
    result.text += "next: " + next + "\n";
  }
  return result;
}

}  // namespace

std::string_view error_code_name(ErrorCode code) { return info(code).name; }

std::string_view task_support_name(TaskSupport support) {
  switch (support) {
    case TaskSupport::kOptional:
      return "optional";
    case TaskSupport::kRequired:
      return "required";
    case TaskSupport::kForbidden:
      break;
  }
  return "forbidden";
}

json error_json(ErrorCode code, const std::string& message, const std::string& next_step) {
  return json{{"code", info(code).name},
              {"message", message},
              {"next_step", next_step.empty() ? info(code).next_step : next_step}};
}

const json& error_schema() {
  static const json schema = [] {
    json codes = json::array();
    for (const auto& entry : kCodes) codes.push_back(entry.name);
    return json{
        {"type", "object"},
        {"description",
         "present exactly when isError is true: why the tool could not do its work, and what "
         "to do"},
        {"properties",
         {{"code", {{"type", "string"}, {"enum", codes}}},
          {"message", {{"type", "string"}}},
          {"next_step", {{"type", "string"}}}}},
        {"required", {"code", "message", "next_step"}}};
  }();
  return schema;
}

ToolResult ToolResult::error(ErrorCode code, std::string message, std::string next_step) {
  ToolResult result;
  result.structured = json{{"error", error_json(code, message, next_step)}};
  result.text = failure_text(result.structured["error"]);
  result.is_error = true;
  return result;
}

ToolResult ToolResult::error(std::string message) {
  return error(ErrorCode::kFailed, std::move(message));
}

ToolResult& ToolResult::fail(ErrorCode code, std::string message, std::string next_step) {
  if (!structured.is_object()) structured = json::object();
  structured["error"] = error_json(code, message, next_step);
  is_error = true;
  return *this;
}

Result<json> output_schema_with_error(const json& schema) {
  if (!schema.is_object() || !schema.contains("type") || schema["type"] != "object")
    return make_error("outputSchema must be {\"type\": \"object\", ...}");
  json out = schema;
  // A top-level anyOf may only name alternative required sets (a long call's running answer,
  // long_call.h); kiln adds the error branch to them.
  bool required_sets =
      out.contains("anyOf") && out["anyOf"].is_array() && !out.contains("required");
  if (required_sets)
    for (const auto& branch : out["anyOf"])
      required_sets =
          required_sets && branch.is_object() && branch.size() == 1 && branch.contains("required");
  if (out.contains("oneOf") || (out.contains("anyOf") && !required_sets))
    return make_error(
        "outputSchema: declare `required` at the top level, not anyOf/oneOf; kiln adds the "
        "error branch");
  json& properties = out["properties"];
  if (!properties.is_object()) properties = json::object();
  if (properties.contains("error"))
    return make_error(
        "outputSchema declares `error`; that name is the shared error shape, which kiln adds "
        "(use ToolResult::fail)");
  properties["error"] = error_schema();
  if (auto required = out.find("required"); required != out.end()) {
    if (!required->is_array() || !required->empty())
      out["anyOf"] = json::array({{{"required", *required}}, {{"required", {"error"}}}});
    out.erase("required");
  }
  if (required_sets) out["anyOf"].push_back({{"required", {"error"}}});
  if (auto problem = check_output_schema(out)) return make_error("outputSchema: " + *problem);
  return out;
}

Status ToolRegistry::add(Tool tool) {
  // The tool-name rule of MCP 2025-11-25: 1 to 128 ASCII letters, digits, '_', '-' and '.'.
  // (kiln's own tools keep to snake_case; the conformance fixtures need digits.)
  static const std::regex kName("^[A-Za-z0-9_.-]{1,128}$");
  const std::string who = "tool `" + tool.name + "`: ";
  if (!std::regex_match(tool.name, kName))
    return make_error(who +
                      "name must be 1 to 128 ASCII letters, digits, '_', '-' or '.' "
                      "(^[A-Za-z0-9_.-]{1,128}$, the MCP tool-name rule)");
  if (tools_.count(tool.name)) return make_error(who + "declared twice");
  if (tool.title.empty()) return make_error(who + "needs a title");
  if (tool.description.empty() || tool.description.size() >= 1024)
    return make_error(who + "description must be non-empty and under 1 KB (is " +
                      std::to_string(tool.description.size()) + " bytes)");
  if (auto problem = check_tool_schema(tool.input_schema))
    return make_error(who + "input " + *problem);
  auto output = output_schema_with_error(tool.output_schema);
  if (!output) return make_error(who + output.error().message);
  tool.output_schema = std::move(*output);
  if (!tool.handler) return make_error(who + "has no handler");
  std::string name = tool.name;
  tools_.emplace(std::move(name), std::move(tool));
  return Ok{};
}

const Tool* ToolRegistry::find(const std::string& name) const {
  auto it = tools_.find(name);
  return it == tools_.end() ? nullptr : &it->second;
}

json ToolRegistry::list() const {
  json tools = json::array();
  for (const auto& [name, tool] : tools_) {
    tools.push_back({{"name", tool.name},
                     {"title", tool.title},
                     {"description", tool.description},
                     {"inputSchema", tool.input_schema},
                     {"outputSchema", tool.output_schema},
                     {"annotations",
                      {{"title", tool.title},
                       {"readOnlyHint", tool.annotations.read_only},
                       {"destructiveHint", tool.annotations.destructive},
                       {"idempotentHint", tool.annotations.idempotent},
                       {"openWorldHint", tool.annotations.open_world}}}});
    if (tool.task_support != TaskSupport::kForbidden)
      tools.back()["execution"] = {{"taskSupport", task_support_name(tool.task_support)}};
  }
  return json{{"tools", std::move(tools)}};
}

ToolResult ToolRegistry::run(const std::string& name, const json& arguments,
                             CallContext& context) const {
  const Tool* tool = find(name);
  if (!tool)
    return ToolResult::error(ErrorCode::kNotFound, "unknown tool `" + name + "`",
                             "call tools/list for the tools kiln offers");
  const json args = arguments.is_null() ? json::object() : arguments;
  try {
    if (auto problem = validate_against_schema(tool->input_schema, args)) {
      return ToolResult::error(ErrorCode::kInvalidArguments,
                               "invalid arguments for `" + name + "`: " + *problem);
    }
    return normalized(tool->handler(args, context));
  } catch (const std::exception& e) {
    return ToolResult::error(ErrorCode::kInternal, "internal error in `" + name + "`: " + e.what(),
                             "this is a kiln bug, please report it with the arguments you sent");
  }
}

json ToolRegistry::call(const std::string& name, const json& arguments,
                        CallContext& context) const {
  return to_call_result(run(name, arguments, context));
}

json to_call_result(const ToolResult& result) {
  std::string text = result.text.empty() ? json_text(result.structured) : result.text;
  return json{{"content", json::array({{{"type", "text"}, {"text", std::move(text)}}})},
              {"structuredContent", result.structured},
              {"isError", result.is_error}};
}

}  // namespace kiln::mcp
