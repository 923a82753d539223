#include "fixtures.h"

namespace kiln::tools::conformance {

using json = nlohmann::json;

const char* const kPngBase64 =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
const char* const kWavBase64 =
    "UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YRAAAAAAAAAAAAAAAAAAAAAAAAAA";

mcp::ToolResult text_result(std::string text) {
  mcp::ToolResult result;
  result.structured = json{{"text", text}};
  result.text = std::move(text);
  return result;
}

mcp::Tool fixture_tool(std::string name, std::string title, std::string description,
                       std::function<mcp::ToolResult(mcp::CallContext&)> work) {
  mcp::Tool tool;
  tool.name = std::move(name);
  tool.title = std::move(title);
  tool.description =
      "Conformance-suite fixture (kiln mcp --conformance-fixtures): " + std::move(description);
  tool.input_schema = json{{"type", "object"}, {"properties", json::object()}};
  tool.output_schema = json{{"type", "object"}, {"properties", {{"text", {{"type", "string"}}}}}};
  tool.annotations = {
      .read_only = true, .destructive = false, .idempotent = true, .open_world = false};
  tool.handler = [work = std::move(work)](const json&, mcp::CallContext& context) {
    return work(context);
  };
  return tool;
}

json elicitation_request(const std::string& message, const std::string& property,
                         const std::string& type) {
  json schema{{"type", "object"},
              {"properties", {{property, {{"type", type}}}}},
              {"required", json::array({property})}};
  return json{{"method", "elicitation/create"},
              {"params", {{"message", message}, {"requestedSchema", std::move(schema)}}}};
}

json sampling_request(const std::string& text, int max_tokens) {
  return json{
      {"method", "sampling/createMessage"},
      {"params",
       {{"messages",
         json::array({{{"role", "user"}, {"content", {{"type", "text"}, {"text", text}}}}})},
        {"maxTokens", max_tokens}}}};
}

json roots_request() { return json{{"method", "roots/list"}, {"params", json::object()}}; }

std::string elicited(const mcp::ClientInput& input, const std::string& key,
                     const std::string& property) {
  if (!input.responses.contains(key)) return "";
  const json& response = input.responses[key];
  if (!response.is_object() || !response.contains("content") || !response["content"].is_object())
    return "";
  const json& content = response["content"];
  if (!content.contains(property)) return "";
  return content[property].is_string() ? content[property].get<std::string>()
                                       : content[property].dump();
}

std::optional<json> answers(const json& requests, mcp::CallContext& context,
                            mcp::ToolResult& outcome) {
  auto got = context.ask(requests);
  if (got) return *got;
  if (context.cancelled()) {
    outcome = mcp::ToolResult::error(mcp::ErrorCode::kRunFailed, "cancelled by the client");
    return std::nullopt;
  }
  if (!context.input().can_ask) {  // a 2025 session whose client could not answer
    outcome = mcp::ToolResult::error(got.error().message);
    return std::nullopt;
  }
  bool all = true;
  for (const auto& [key, request] : requests.items())
    all = all && context.input().responses.contains(key);
  if (all) return context.input().responses;
  outcome = ask(requests);
  return std::nullopt;
}

mcp::ToolResult ask(json input_requests, std::string request_state) {
  mcp::ToolResult result;
  result.input_required = mcp::InputRequired{std::move(input_requests), std::move(request_state)};
  return result;
}

void add_conformance_fixtures(mcp::Server& server, std::vector<mcp::Tool>& tools) {
  tools.push_back(make_test_simple_text_tool());
  tools.push_back(make_test_image_content_tool());
  tools.push_back(make_test_audio_content_tool());
  tools.push_back(make_test_embedded_resource_tool());
  tools.push_back(make_test_multiple_content_types_tool());
  tools.push_back(make_test_tool_with_logging_tool());
  tools.push_back(make_test_logging_tool());
  tools.push_back(make_test_tool_with_progress_tool());
  tools.push_back(make_test_error_handling_tool());
  tools.push_back(make_test_missing_capability_tool());
  tools.push_back(make_test_streaming_elicitation_tool());
  tools.push_back(make_test_input_required_result_elicitation_tool());
  tools.push_back(make_test_input_required_result_sampling_tool());
  tools.push_back(make_test_input_required_result_list_roots_tool());
  tools.push_back(make_test_input_required_result_request_state_tool());
  tools.push_back(make_test_input_required_result_multiple_inputs_tool());
  tools.push_back(make_test_input_required_result_multi_round_tool());
  tools.push_back(make_test_input_required_result_tampered_state_tool());
  tools.push_back(make_test_input_required_result_capabilities_tool());
  add_client_request_fixtures(tools);
  add_task_fixtures(tools);
  add_fixture_resources(server.resources());
  add_fixture_prompts(server.prompts());
}

}  // namespace kiln::tools::conformance
