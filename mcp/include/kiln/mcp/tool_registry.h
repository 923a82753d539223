// The tools a server offers, validated when declared and when called.
#pragma once

#include <map>
#include <string>

#include "kiln/base/result.h"
#include "kiln/mcp/tool.h"

namespace kiln::mcp {

class ToolRegistry {
 public:
  // Refuses a tool whose declaration breaks the rules of tools/README.md (name, description
  // size, flat input schema, object output schema, duplicate name).
  Status add(Tool tool);

  bool contains(const std::string& name) const { return tools_.count(name) != 0; }
  const Tool* find(const std::string& name) const;

  // tools/list: one page, ordered by name.
  nlohmann::json list() const;

  // Validates `arguments` against the input schema, then runs the handler. An
  // invalid argument or a handler exception becomes an isError result. The
  // caller checks contains() first: an unknown tool is a protocol error.
  nlohmann::json call(const std::string& name, const nlohmann::json& arguments,
                      CallContext& context) const;

  // The same, returning the ToolResult (for `kiln call`).
  ToolResult run(const std::string& name, const nlohmann::json& arguments,
                 CallContext& context) const;

 private:
  std::map<std::string, Tool> tools_;
};

// The tools/call result object for a ToolResult.
nlohmann::json to_call_result(const ToolResult& result);

}  // namespace kiln::mcp
