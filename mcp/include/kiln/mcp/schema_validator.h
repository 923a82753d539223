// Validation of tool arguments and results against the JSON Schema subset kiln's tools
// declare. Debian ships no C++ JSON Schema validator, so kiln carries this one;
// it covers exactly what tool schemas may use (see check_tool_schema and
// check_output_schema).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace kiln::mcp {

// nullopt when `value` satisfies `schema`; otherwise one message naming the
// argument path and what was expected, e.g. "argument `steps`: expected an
// integer, got the string \"x\"".
std::optional<std::string> validate_against_schema(const nlohmann::json& schema,
                                                   const nlohmann::json& value);

// nullopt when `schema` is a flat object schema as tools/README.md requires (object
// type, properties of primitive, enum or array type, no anyOf/oneOf/allOf/$ref)
// and uses only keywords validate_against_schema understands.
std::optional<std::string> check_tool_schema(const nlohmann::json& schema);

// nullopt when `schema` is an object schema whose every keyword validate_against_schema
// understands; unlike an input schema it may nest objects and use anyOf/oneOf/allOf and a
// schema for additionalProperties (outputSchema, which describes results).
std::optional<std::string> check_output_schema(const nlohmann::json& schema);

}  // namespace kiln::mcp
