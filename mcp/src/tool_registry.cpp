#include "kiln/mcp/tool_registry.h"

#include <regex>

#include "kiln/base/json_text.h"
#include "kiln/mcp/schema_validator.h"

namespace kiln::mcp {

using json = nlohmann::json;

ToolResult ToolResult::error(std::string message) {
  ToolResult result;
  result.structured = json{{"error", message}};
  result.text = std::move(message);
  result.is_error = true;
  return result;
}

Status ToolRegistry::add(Tool tool) {
  static const std::regex kName("^[a-z_]+$");
  const std::string who = "tool `" + tool.name + "`: ";
  if (!std::regex_match(tool.name, kName)) return make_error(who + "name must match ^[a-z_]+$");
  if (tools_.count(tool.name)) return make_error(who + "declared twice");
  if (tool.title.empty()) return make_error(who + "needs a title");
  if (tool.description.empty() || tool.description.size() >= 1024)
    return make_error(who + "description must be non-empty and under 1 KB (is " +
                      std::to_string(tool.description.size()) + " bytes)");
  if (auto problem = check_tool_schema(tool.input_schema))
    return make_error(who + "input " + *problem);
  if (!tool.output_schema.is_object() || !tool.output_schema.contains("type") ||
      tool.output_schema["type"] != "object")
    return make_error(who + "outputSchema must be {\"type\": \"object\", ...}");
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
  }
  return json{{"tools", std::move(tools)}};
}

ToolResult ToolRegistry::run(const std::string& name, const json& arguments,
                             CallContext& context) const {
  const Tool* tool = find(name);
  if (!tool)
    return ToolResult::error("unknown tool `" + name +
                             "`; call tools/list for the tools kiln offers");
  const json args = arguments.is_null() ? json::object() : arguments;
  try {
    if (auto problem = validate_against_schema(tool->input_schema, args)) {
      return ToolResult::error("invalid arguments for `" + name + "`: " + *problem);
    }
    return tool->handler(args, context);
  } catch (const std::exception& e) {
    return ToolResult::error("internal error in `" + name + "`: " + e.what() +
                             "; this is a kiln bug, please report it with the arguments you sent");
  }
}

json ToolRegistry::call(const std::string& name, const json& arguments,
                        CallContext& context) const {
  return to_call_result(run(name, arguments, context));
}

json to_call_result(const ToolResult& result) {
  std::string text = result.text.empty() ? json_text(result.structured) : result.text;
  json out{{"content", json::array({{{"type", "text"}, {"text", std::move(text)}}})},
           {"isError", result.is_error}};
  if (!result.is_error) out["structuredContent"] = result.structured;
  return out;
}

}  // namespace kiln::mcp
