// The fixtures of the MCP conformance suite (@modelcontextprotocol/conformance):
// tools, resources and prompts with the names and contents its scenarios call,
// so the suite exercises kiln's protocol machinery. Registered only with
// `kiln mcp --conformance-fixtures`, never in a normal session.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kiln/mcp/server.h"
#include "kiln/mcp/tool.h"

namespace kiln::tools::conformance {

// A 1x1 red PNG and a 1 ms silent 8 kHz mono WAV, base64.
extern const char* const kPngBase64;
extern const char* const kWavBase64;

// A fixture tool without arguments whose structured result is {"text": ...}.
mcp::Tool fixture_tool(std::string name, std::string title, std::string description,
                       std::function<mcp::ToolResult(mcp::CallContext&)> work);
mcp::ToolResult text_result(std::string text);

// Input requests of multi round-trip fixtures (2026-07-28): ask the user for one
// property, ask for an LLM completion, ask for the client's roots.
nlohmann::json elicitation_request(const std::string& message, const std::string& property,
                                   const std::string& type);
nlohmann::json sampling_request(const std::string& text, int max_tokens);
nlohmann::json roots_request();
// The accepted elicitation's content[property] as text, or "" when absent.
std::string elicited(const mcp::ClientInput& input, const std::string& key,
                     const std::string& property);
mcp::ToolResult ask(nlohmann::json input_requests, std::string request_state = "");
// The client's answers to `requests`, by key, however the call can ask: requests of kiln's
// own in a 2025 session or a task (CallContext::ask), else input-required rounds
// (2026-07-28). nullopt with `outcome` set when the call must end first: with the
// input_required result, or with the error that kept the client from answering.
std::optional<nlohmann::json> answers(const nlohmann::json& requests, mcp::CallContext& context,
                                      mcp::ToolResult& outcome);

mcp::Tool make_test_simple_text_tool();
mcp::Tool make_test_image_content_tool();
mcp::Tool make_test_audio_content_tool();
mcp::Tool make_test_embedded_resource_tool();
mcp::Tool make_test_multiple_content_types_tool();
mcp::Tool make_test_tool_with_logging_tool();
mcp::Tool make_test_logging_tool();
mcp::Tool make_test_tool_with_progress_tool();
mcp::Tool make_test_error_handling_tool();
mcp::Tool make_test_missing_capability_tool();
mcp::Tool make_test_streaming_elicitation_tool();
mcp::Tool make_test_input_required_result_elicitation_tool();
mcp::Tool make_test_input_required_result_sampling_tool();
mcp::Tool make_test_input_required_result_list_roots_tool();
mcp::Tool make_test_input_required_result_request_state_tool();
mcp::Tool make_test_input_required_result_multiple_inputs_tool();
mcp::Tool make_test_input_required_result_multi_round_tool();
mcp::Tool make_test_input_required_result_tampered_state_tool();
mcp::Tool make_test_input_required_result_capabilities_tool();

// The fixtures that ask the client mid-call (client_request_fixtures.cpp): test_sampling,
// test_elicitation, test_elicitation_sep1034_defaults, test_elicitation_sep1330_enums.
void add_client_request_fixtures(std::vector<mcp::Tool>& tools);

// The tasks-extension fixtures (task_fixtures.cpp).
void add_task_fixtures(std::vector<mcp::Tool>& tools);

void add_fixture_resources(mcp::ResourceRegistry& resources);
void add_fixture_prompts(mcp::PromptRegistry& prompts);

// Every fixture: the tools go into `tools` (the toolbox registers them with the
// rest), resources and prompts straight into `server`.
void add_conformance_fixtures(mcp::Server& server, std::vector<mcp::Tool>& tools);

}  // namespace kiln::tools::conformance
