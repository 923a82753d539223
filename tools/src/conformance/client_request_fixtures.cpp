// The fixtures that ask the client mid-call: in a 2025 session through requests of kiln's own
// (sampling/createMessage, elicitation/create; scenarios tools-call-sampling,
// tools-call-elicitation, elicitation-sep1034-defaults, elicitation-sep1330-enums), under
// 2026-07-28 through input-required rounds (answers() in fixtures.cpp).
#include "fixtures.h"

namespace kiln::tools::conformance {
namespace {

using json = nlohmann::json;

// A fixture that sends `request(arguments)` as the input request `key` and turns the answer
// into its text; `arguments` are the tool's, with `properties` its input schema.
mcp::Tool asking_tool(std::string name, std::string title, std::string description, json properties,
                      std::string key, std::function<json(const json& arguments)> request,
                      std::function<std::string(const json& answer)> text) {
  mcp::Tool tool = fixture_tool(std::move(name), std::move(title), std::move(description),
                                [](mcp::CallContext&) { return text_result(""); });
  json required = json::array();
  for (const auto& [property, schema] : properties.items()) required.push_back(property);
  tool.input_schema["properties"] = std::move(properties);
  if (!required.empty()) tool.input_schema["required"] = std::move(required);
  tool.annotations.idempotent = false;  // a person or a model answers, differently each time
  tool.handler = [key, request, text](const json& arguments, mcp::CallContext& context) {
    mcp::ToolResult outcome;
    auto got = answers(json{{key, request(arguments)}}, context, outcome);
    if (!got) return outcome;
    return text_result(text(got->contains(key) ? (*got)[key] : json(nullptr)));
  };
  return tool;
}

json elicitation(const std::string& message, json properties, json required) {
  json schema{{"type", "object"}, {"properties", std::move(properties)}};
  if (!required.empty()) schema["required"] = std::move(required);
  return json{{"method", "elicitation/create"},
              {"params", {{"message", message}, {"requestedSchema", std::move(schema)}}}};
}

// "action=accept, content={...}" of an elicitation answer.
std::string elicitation_text(const json& answer) {
  if (!answer.is_object()) return "action=?, content={}";
  return "action=" + answer.value("action", std::string("?")) +
         ", content=" + answer.value("content", json::object()).dump();
}

mcp::Tool make_test_sampling_tool() {
  return asking_tool(
      "test_sampling", "Asks the client's model (conformance)",
      "sends sampling/createMessage with `prompt`, then returns the model's answer.",
      {{"prompt", {{"type", "string"}, {"description", "what to ask the model"}}}}, "sampling",
      [](const json& arguments) {
        return sampling_request(arguments.value("prompt", std::string("Hello")), 100);
      },
      [](const json& answer) {
        const bool has_text = answer.is_object() && answer.contains("content") &&
                              answer["content"].is_object() &&
                              answer["content"].value("type", "") == "text";
        return "LLM response: " +
               (has_text ? answer["content"].value("text", std::string()) : answer.dump());
      });
}

mcp::Tool make_test_elicitation_tool() {
  return asking_tool(
      "test_elicitation", "Asks the user (conformance)",
      "sends elicitation/create with `message` for a username and an email, then returns the "
      "user's answer.",
      {{"message", {{"type", "string"}, {"description", "what to show the user"}}}}, "user",
      [](const json& arguments) {
        return elicitation(
            arguments.value("message", std::string("Please provide your information")),
            {{"username", {{"type", "string"}, {"description", "User's response"}}},
             {"email", {{"type", "string"}, {"description", "User's email address"}}}},
            {"username", "email"});
      },
      [](const json& answer) { return "User response: " + elicitation_text(answer); });
}

// SEP-1034: a default for every primitive type.
mcp::Tool make_test_elicitation_sep1034_defaults_tool() {
  return asking_tool(
      "test_elicitation_sep1034_defaults", "Asks with defaults (conformance)",
      "sends elicitation/create whose schema has a default for every primitive type.",
      json::object(), "profile",
      [](const json&) {
        return elicitation("Please review your profile",
                           {{"name", {{"type", "string"}, {"default", "John Doe"}}},
                            {"age", {{"type", "integer"}, {"default", 30}}},
                            {"score", {{"type", "number"}, {"default", 95.5}}},
                            {"status",
                             {{"type", "string"},
                              {"enum", {"active", "inactive", "pending"}},
                              {"default", "active"}}},
                            {"verified", {{"type", "boolean"}, {"default", true}}}},
                           json::array());
      },
      [](const json& answer) { return "Elicitation completed: " + elicitation_text(answer); });
}

// SEP-1330: the five enum shapes (untitled, titled, legacy enumNames; single and multi).
mcp::Tool make_test_elicitation_sep1330_enums_tool() {
  auto titled = [](const char* prefix, const char* word) {
    json options = json::array();
    const char* ordinals[] = {"First", "Second", "Third"};
    for (int i = 0; i < 3; ++i)
      options.push_back({{"const", std::string(prefix) + std::to_string(i + 1)},
                         {"title", std::string(ordinals[i]) + " " + word}});
    return options;
  };
  json properties{
      {"untitledSingle", {{"type", "string"}, {"enum", {"option1", "option2", "option3"}}}},
      {"titledSingle", {{"type", "string"}, {"oneOf", titled("value", "Option")}}},
      {"legacyEnum",
       {{"type", "string"},
        {"enum", {"opt1", "opt2", "opt3"}},
        {"enumNames", {"Option One", "Option Two", "Option Three"}}}},
      {"untitledMulti",
       {{"type", "array"},
        {"items", {{"type", "string"}, {"enum", {"option1", "option2", "option3"}}}}}},
      {"titledMulti", {{"type", "array"}, {"items", {{"anyOf", titled("value", "Choice")}}}}}};
  return asking_tool(
      "test_elicitation_sep1330_enums", "Asks with every enum shape (conformance)",
      "sends elicitation/create whose schema has the five enum shapes of SEP-1330.", json::object(),
      "choices",
      [properties](const json&) { return elicitation("Please choose", properties, json::array()); },
      [](const json& answer) { return "Elicitation completed: " + elicitation_text(answer); });
}

}  // namespace

void add_client_request_fixtures(std::vector<mcp::Tool>& tools) {
  tools.push_back(make_test_sampling_tool());
  tools.push_back(make_test_elicitation_tool());
  tools.push_back(make_test_elicitation_sep1034_defaults_tool());
  tools.push_back(make_test_elicitation_sep1330_enums_tool());
}

}  // namespace kiln::tools::conformance
