#include "kiln/mcp/schema_validator.h"

#include <cmath>
#include <regex>
#include <set>

#include "kiln/base/text.h"

namespace kiln::mcp {
namespace {

using json = nlohmann::json;

std::string describe(const json& value) {
  std::string shown = value.dump();
  if (shown.size() > 60) shown = std::string(utf8_prefix(shown, 57)) + "...";
  switch (value.type()) {
    case json::value_t::string:
      return "the string " + shown;
    case json::value_t::boolean:
      return "the boolean " + shown;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "the integer " + shown;
    case json::value_t::number_float:
      return "the number " + shown;
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    case json::value_t::null:
      return "null";
    default:
      return shown;
  }
}

bool is_integer(const json& value) {
  if (value.is_number_integer()) return true;
  if (!value.is_number_float()) return false;
  double d = value.get<double>();
  return std::isfinite(d) && std::floor(d) == d;
}

bool has_type(const json& value, const std::string& type) {
  if (type == "string") return value.is_string();
  if (type == "integer") return is_integer(value);
  if (type == "number") return value.is_number();
  if (type == "boolean") return value.is_boolean();
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "null") return value.is_null();
  return false;
}

std::string article(const std::string& type) {
  if (type == "integer" || type == "object" || type == "array") return "an " + type;
  if (type == "null") return "null";
  return "a " + type;
}

std::string where(const std::string& path) {
  return path.empty() ? "arguments" : "argument `" + path + "`";
}

std::string child(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::optional<std::string> validate(const json& schema, const json& value, const std::string& path);

std::optional<std::string> check_type(const json& schema, const json& value,
                                      const std::string& path) {
  auto type = schema.find("type");
  if (type == schema.end()) return std::nullopt;
  std::vector<std::string> types;
  if (type->is_string()) types.push_back(type->get<std::string>());
  if (type->is_array())
    for (const auto& t : *type) types.push_back(t.get<std::string>());
  for (const auto& t : types)
    if (has_type(value, t)) return std::nullopt;
  std::string expected;
  for (size_t i = 0; i < types.size(); ++i) expected += (i ? " or " : "") + article(types[i]);
  return where(path) + ": expected " + expected + ", got " + describe(value);
}

std::optional<std::string> check_number(const json& schema, const json& value,
                                        const std::string& path) {
  if (!value.is_number()) return std::nullopt;
  double v = value.get<double>();
  if (auto it = schema.find("minimum"); it != schema.end() && v < it->get<double>())
    return where(path) + ": must be at least " + it->dump() + ", got " + value.dump();
  if (auto it = schema.find("maximum"); it != schema.end() && v > it->get<double>())
    return where(path) + ": must be at most " + it->dump() + ", got " + value.dump();
  if (auto it = schema.find("exclusiveMinimum"); it != schema.end() && v <= it->get<double>())
    return where(path) + ": must be greater than " + it->dump() + ", got " + value.dump();
  if (auto it = schema.find("exclusiveMaximum"); it != schema.end() && v >= it->get<double>())
    return where(path) + ": must be less than " + it->dump() + ", got " + value.dump();
  return std::nullopt;
}

std::optional<std::string> check_string(const json& schema, const json& value,
                                        const std::string& path) {
  if (!value.is_string()) return std::nullopt;
  const auto& s = value.get_ref<const std::string&>();
  // JSON Schema counts characters, not bytes: skip UTF-8 continuation bytes.
  size_t length = 0;
  for (unsigned char c : s) length += (c & 0xC0) != 0x80;
  if (auto it = schema.find("minLength"); it != schema.end() && length < it->get<size_t>())
    return where(path) + ": must be at least " + it->dump() + " characters long";
  if (auto it = schema.find("maxLength"); it != schema.end() && length > it->get<size_t>())
    return where(path) + ": must be at most " + it->dump() + " characters long (got " +
           std::to_string(length) + ")";
  if (auto it = schema.find("pattern"); it != schema.end()) {
    std::regex pattern(it->get<std::string>(), std::regex::ECMAScript);
    if (!std::regex_search(s, pattern))
      return where(path) + ": must match the pattern " + it->get<std::string>() + ", got " +
             describe(value);
  }
  return std::nullopt;
}

std::optional<std::string> check_array(const json& schema, const json& value,
                                       const std::string& path) {
  if (!value.is_array()) return std::nullopt;
  if (auto it = schema.find("minItems"); it != schema.end() && value.size() < it->get<size_t>())
    return where(path) + ": needs at least " + it->dump() + " items";
  if (auto it = schema.find("maxItems"); it != schema.end() && value.size() > it->get<size_t>())
    return where(path) + ": allows at most " + it->dump() + " items (got " +
           std::to_string(value.size()) + ")";
  if (auto items = schema.find("items"); items != schema.end()) {
    for (size_t i = 0; i < value.size(); ++i) {
      if (auto error = validate(*items, value[i], path + "[" + std::to_string(i) + "]"))
        return error;
    }
  }
  if (schema.value("uniqueItems", false)) {
    std::set<std::string> seen;
    for (const auto& item : value)
      if (!seen.insert(item.dump()).second)
        return where(path) + ": items must be unique; " + item.dump() + " appears twice";
  }
  return std::nullopt;
}

std::optional<std::string> check_object(const json& schema, const json& value,
                                        const std::string& path) {
  if (!value.is_object()) return std::nullopt;
  const json empty = json::object();
  const json& properties = schema.contains("properties") ? schema["properties"] : empty;
  if (auto required = schema.find("required"); required != schema.end()) {
    for (const auto& name : *required) {
      if (!value.contains(name.get<std::string>())) {
        std::string key = name.get<std::string>();
        std::string hint;
        if (auto p = properties.find(key);
            p != properties.end() && p->contains("type") && (*p)["type"].is_string())
          hint = " (" + article((*p)["type"].get<std::string>()) + ")";
        return "missing required " + where(child(path, key)) + hint;
      }
    }
  }
  const json* additional = nullptr;
  if (auto it = schema.find("additionalProperties"); it != schema.end()) additional = &*it;
  const bool closed = additional != nullptr && *additional == false;
  for (const auto& [key, item] : value.items()) {
    auto property = properties.find(key);
    if (property == properties.end()) {
      if (additional != nullptr && additional->is_object()) {
        if (auto error = validate(*additional, item, child(path, key))) return error;
        continue;
      }
      if (closed) {
        std::string known;
        for (const auto& [name, unused] : properties.items())
          known += (known.empty() ? "" : ", ") + name;
        return "unknown " + where(child(path, key)) +
               "; known arguments: " + (known.empty() ? "none" : known);
      }
      continue;
    }
    if (auto error = validate(*property, item, child(path, key))) return error;
  }
  return std::nullopt;
}

// anyOf, oneOf and allOf: the value against each alternative.
std::optional<std::string> check_combinations(const json& schema, const json& value,
                                              const std::string& path) {
  if (auto all = schema.find("allOf"); all != schema.end() && all->is_array())
    for (const auto& part : *all)
      if (auto error = validate(part, value, path)) return error;
  for (const char* key : {"anyOf", "oneOf"}) {
    auto options = schema.find(key);
    if (options == schema.end() || !options->is_array()) continue;
    size_t matched = 0;
    std::string first_problem;
    for (const auto& option : *options) {
      auto error = validate(option, value, path);
      if (!error) ++matched;
      if (error && first_problem.empty()) first_problem = *error;
    }
    const bool one = std::string(key) == "oneOf";
    if (matched == 0)
      return where(path) + ": matches none of the " + std::to_string(options->size()) +
             " alternatives of `" + key + "` (the first says: " + first_problem + ")";
    if (one && matched > 1)
      return where(path) + ": matches " + std::to_string(matched) +
             " alternatives of `oneOf`; exactly one may match";
  }
  return std::nullopt;
}

std::optional<std::string> validate(const json& schema, const json& value,
                                    const std::string& path) {
  if (!schema.is_object()) return std::nullopt;  // `true` and `{}` accept everything
  if (auto error = check_type(schema, value, path)) return error;
  if (auto error = check_combinations(schema, value, path)) return error;
  if (auto it = schema.find("enum"); it != schema.end()) {
    bool found = false;
    for (const auto& option : *it) found = found || option == value;
    if (!found) return where(path) + ": must be one of " + it->dump() + ", got " + describe(value);
  }
  if (auto it = schema.find("const"); it != schema.end() && *it != value)
    return where(path) + ": must be " + it->dump() + ", got " + describe(value);
  if (auto error = check_number(schema, value, path)) return error;
  if (auto error = check_string(schema, value, path)) return error;
  if (auto error = check_array(schema, value, path)) return error;
  return check_object(schema, value, path);
}

bool is_count(const json& v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
}

const std::set<std::string>& type_names() {
  static const std::set<std::string> names = {"string", "integer", "number", "boolean",
                                              "object", "array",   "null"};
  return names;
}

// The keywords tool schemas may use, each with a check of its value.
std::optional<std::string> check_keyword_value(const std::string& key, const json& value) {
  auto wrong = [&](const char* expected) -> std::optional<std::string> {
    return "`" + key + "` must be " + expected;
  };
  if (key == "type") {
    std::vector<json> types =
        value.is_array() ? value.get<std::vector<json>>() : std::vector<json>{value};
    if (types.empty()) return wrong("a type name or a non-empty list of them");
    for (const auto& t : types)
      if (!t.is_string() || !type_names().count(t.get<std::string>()))
        return "`type` " + t.dump() +
               " is not a JSON Schema type (string, integer, number, boolean, object, array, null)";
    return std::nullopt;
  }
  if (key == "description" || key == "title" || key == "format" || key == "$schema")
    return value.is_string() ? std::nullopt : wrong("a string");
  if (key == "default" || key == "const") return std::nullopt;
  if (key == "examples") return value.is_array() ? std::nullopt : wrong("an array");
  if (key == "enum")
    return value.is_array() && !value.empty() ? std::nullopt : wrong("a non-empty array");
  if (key == "minimum" || key == "maximum" || key == "exclusiveMinimum" ||
      key == "exclusiveMaximum")
    return value.is_number() ? std::nullopt : wrong("a number");
  if (key == "minLength" || key == "maxLength" || key == "minItems" || key == "maxItems")
    return is_count(value) ? std::nullopt : wrong("a non-negative integer");
  if (key == "uniqueItems" || key == "additionalProperties")
    return value.is_boolean() ? std::nullopt : wrong("a boolean");
  if (key == "pattern") {
    if (!value.is_string()) return wrong("a string");
    try {
      std::regex(value.get<std::string>(), std::regex::ECMAScript);
    } catch (const std::regex_error&) {
      return "`pattern` is not a valid regular expression";
    }
    return std::nullopt;
  }
  if (key == "items" || key == "properties")
    return value.is_object() ? std::nullopt : wrong("an object");
  if (key == "required") {
    if (!value.is_array()) return wrong("an array of property names");
    for (const auto& name : value)
      if (!name.is_string()) return wrong("an array of property names");
    return std::nullopt;
  }
  if (key == "anyOf" || key == "oneOf" || key == "allOf" || key == "$ref" || key == "not")
    return "`" + key + "` is not allowed; tool schemas stay flat so every client can read them";
  return "unsupported schema keyword `" + key + "`";
}

// An output schema may nest, combine alternatives and type additionalProperties; every
// keyword must still be one validate() checks (or an annotation), so a result is never
// waved through by a keyword nobody reads.
std::optional<std::string> check_output_keywords(const json& schema, const std::string& path) {
  if (schema.is_boolean()) return std::nullopt;
  if (!schema.is_object()) return path + ": a schema must be an object or a boolean";
  for (const auto& [key, value] : schema.items()) {
    if (key == "anyOf" || key == "oneOf" || key == "allOf") {
      if (!value.is_array() || value.empty())
        return path + ": `" + key + "` must be a non-empty array of schemas";
      for (size_t i = 0; i < value.size(); ++i)
        if (auto error =
                check_output_keywords(value[i], path + "." + key + "[" + std::to_string(i) + "]"))
          return error;
      continue;
    }
    if (key == "additionalProperties" && value.is_object()) {
      if (auto error = check_output_keywords(value, path + ".additionalProperties")) return error;
      continue;
    }
    if (auto problem = check_keyword_value(key, value)) return path + ": " + *problem;
    if (key == "items")
      if (auto error = check_output_keywords(value, path + ".items")) return error;
    if (key == "properties")
      for (const auto& [name, property] : value.items())
        if (auto error = check_output_keywords(property, path + ".properties." + name))
          return error;
  }
  return std::nullopt;
}

bool declares_type(const json& schema, const std::string& type) {
  auto it = schema.find("type");
  if (it == schema.end()) return false;
  if (it->is_string()) return *it == type;
  if (it->is_array())
    for (const auto& t : *it)
      if (t == type) return true;
  return false;
}

// depth 0: the top-level object; 1: a property; 2: an array property's items.
std::optional<std::string> check_keywords(const json& schema, const std::string& path, int depth) {
  if (!schema.is_object()) return path + ": a schema must be an object";
  for (const auto& [key, value] : schema.items()) {
    if (auto problem = check_keyword_value(key, value)) return path + ": " + *problem;
  }
  if (depth > 0 && (schema.contains("properties") || declares_type(schema, "object")))
    return path +
           ": nested objects are not allowed; a flat tool schema has primitive, enum or array "
           "properties";
  if (auto items = schema.find("items"); items != schema.end()) {
    if (depth >= 2) return path + ": arrays of arrays are not allowed in a flat tool schema";
    if (auto error = check_keywords(*items, path + ".items", depth + 1)) return error;
  }
  if (auto properties = schema.find("properties"); properties != schema.end()) {
    for (const auto& [name, property] : properties->items())
      if (auto error = check_keywords(property, path + ".properties." + name, depth + 1))
        return error;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> validate_against_schema(const json& schema, const json& value) {
  return validate(schema, value, "");
}

std::optional<std::string> check_output_schema(const json& schema) {
  if (!schema.is_object() || !schema.contains("type") || schema["type"] != "object")
    return "schema: the top level must be {\"type\": \"object\", ...}";
  return check_output_keywords(schema, "schema");
}

std::optional<std::string> check_tool_schema(const json& schema) {
  if (!schema.is_object() || !schema.contains("type") || schema["type"] != "object")
    return "schema: the top level must be {\"type\": \"object\", ...}";
  return check_keywords(schema, "schema", 0);
}

}  // namespace kiln::mcp
