// test_input_required_result_sampling: asks the client's LLM a question, then
// returns its answer (scenario input-required-result-basic-sampling).
#include "fixtures.h"

namespace kiln::tools::conformance {

using json = nlohmann::json;

mcp::Tool make_test_input_required_result_sampling_tool() {
  return fixture_tool(
      "test_input_required_result_sampling", "Asks the client's model (conformance)",
      "asks for an LLM completion through an input_required result, then returns its text.",
      [](mcp::CallContext& context) {
        const json& responses = context.input().responses;
        if (!responses.contains("capital_question"))
          return ask(
              {{"capital_question", sampling_request("What is the capital of France?", 100)}});
        const json& answer = responses["capital_question"];
        std::string text = answer.is_object() && answer.contains("content") &&
                                   answer["content"].is_object() &&
                                   answer["content"].contains("text")
                               ? answer["content"]["text"].dump()
                               : answer.dump();
        return text_result("The model answered: " + text);
      });
}

}  // namespace kiln::tools::conformance
