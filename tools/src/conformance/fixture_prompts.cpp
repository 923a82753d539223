// The conformance suite's prompts: test_simple_prompt, test_prompt_with_arguments,
// test_prompt_with_embedded_resource and test_prompt_with_image (scenarios prompts-*,
// completion-complete).
#include "fixtures.h"

namespace kiln::tools::conformance {

using json = nlohmann::json;
using Arguments = std::map<std::string, std::string>;

namespace {

json user_message(json content) { return json{{"role", "user"}, {"content", std::move(content)}}; }
json text_block(const std::string& text) { return json{{"type", "text"}, {"text", text}}; }

}  // namespace

void add_fixture_prompts(mcp::PromptRegistry& prompts) {
  mcp::Prompt simple;
  simple.name = "test_simple_prompt";
  simple.title = "Simple prompt (conformance)";
  simple.description = "Conformance-suite fixture: one fixed user message.";
  simple.render = [](const Arguments&) -> Result<std::string> {
    return std::string("This is a simple prompt for testing.");
  };
  prompts.add(std::move(simple));

  mcp::Prompt with_arguments;
  with_arguments.name = "test_prompt_with_arguments";
  with_arguments.title = "Prompt with arguments (conformance)";
  with_arguments.description = "Conformance-suite fixture: a message naming its two arguments.";
  auto words = [](const Arguments&) {
    return std::vector<std::string>{"paris", "park", "party", "test", "testing"};
  };
  with_arguments.arguments = {{"arg1", "First test argument", true, words},
                              {"arg2", "Second test argument", true, words}};
  with_arguments.render = [](const Arguments& args) -> Result<std::string> {
    return "Prompt with arguments: arg1='" + args.at("arg1") + "', arg2='" + args.at("arg2") + "'";
  };
  prompts.add(std::move(with_arguments));

  mcp::Prompt embedded;
  embedded.name = "test_prompt_with_embedded_resource";
  embedded.title = "Prompt with an embedded resource (conformance)";
  embedded.description = "Conformance-suite fixture: an embedded resource, then a text message.";
  embedded.arguments = {{"resourceUri", "URI of the resource to embed", true, {}}};
  embedded.render_messages = [](const Arguments& args) -> Result<json> {
    return json::array({user_message({{"type", "resource"},
                                      {"resource",
                                       {{"uri", args.at("resourceUri")},
                                        {"mimeType", "text/plain"},
                                        {"text", "Embedded resource content for testing."}}}}),
                        user_message(text_block("Please process the embedded resource above."))});
  };
  prompts.add(std::move(embedded));

  mcp::Prompt image;
  image.name = "test_prompt_with_image";
  image.title = "Prompt with an image (conformance)";
  image.description = "Conformance-suite fixture: an image, then a text message.";
  image.render_messages = [](const Arguments&) -> Result<json> {
    return json::array(
        {user_message({{"type", "image"}, {"data", kPngBase64}, {"mimeType", "image/png"}}),
         user_message(text_block("Please analyze the image above."))});
  };
  prompts.add(std::move(image));

  // Multi round-trip on a request other than tools/call (input-required-result-non-tool-request).
  mcp::Prompt interactive;
  interactive.name = "test_input_required_result_prompt";
  interactive.title = "Prompt that asks first (conformance)";
  interactive.description =
      "Conformance-suite fixture: asks the user for context (2026-07-28), then renders it.";
  interactive.needs_input = [](const Arguments&,
                               const mcp::ClientInput& input) -> std::optional<mcp::InputRequired> {
    if (!elicited(input, "user_context", "context").empty()) return std::nullopt;
    return mcp::InputRequired{
        {{"user_context",
          elicitation_request("What context should the prompt use?", "context", "string")}},
        ""};
  };
  interactive.render = [](const Arguments&) -> Result<std::string> {
    return std::string("Use the context the user gave.");
  };
  prompts.add(std::move(interactive));
}

}  // namespace kiln::tools::conformance
