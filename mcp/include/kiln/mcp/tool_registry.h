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
  // size, flat input schema, object output schema, duplicate name). The output schema is
  // stored as output_schema_with_error makes it, so every tool's schema admits the shared
  // error shape.
  Status add(Tool tool);

  bool contains(const std::string& name) const { return tools_.count(name) != 0; }
  const Tool* find(const std::string& name) const;

  // tools/list: one page, ordered by name.
  nlohmann::json list() const;

  // Validates `arguments` against the input schema, then runs the handler. An
  // invalid argument or a handler exception becomes an isError result with the shared
  // `error` object; so does an isError result a handler returned without one, and the text
  // of every isError result says the error's message and next step. The
  // caller checks contains() first: an unknown tool is a protocol error.
  nlohmann::json call(const std::string& name, const nlohmann::json& arguments,
                      CallContext& context) const;

  // The same, returning the ToolResult (for `kiln call`).
  ToolResult run(const std::string& name, const nlohmann::json& arguments,
                 CallContext& context) const;

 private:
  std::map<std::string, Tool> tools_;
};

// The tools/call result object for a ToolResult: text content, isError and, success or
// failure, structuredContent.
nlohmann::json to_call_result(const ToolResult& result);

// `schema` (a tool's declared outputSchema: {"type": "object", ...}) with the shared `error`
// property added and a top-level `required` turned into "anyOf: these fields, or `error`", so
// a failure that carries only the error validates too. Refused when the schema declares
// `error` itself or a top-level anyOf/oneOf, or uses a keyword validate_against_schema does
// not know.
Result<nlohmann::json> output_schema_with_error(const nlohmann::json& schema);

}  // namespace kiln::mcp
