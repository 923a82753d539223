// test_input_required_result_multiple_inputs: an elicitation, a sampling request and
// a roots request in one input_required result (scenario
// input-required-result-multiple-input-requests).
#include "fixtures.h"

namespace kiln::tools::conformance {

mcp::Tool make_test_input_required_result_multiple_inputs_tool() {
  return fixture_tool(
      "test_input_required_result_multiple_inputs", "Asks three things at once (conformance)",
      "asks for a name, a model greeting and the roots in one input_required result.",
      [](mcp::CallContext& context) {
        const auto& responses = context.input().responses;
        bool all = responses.contains("user_name") && responses.contains("greeting") &&
                   responses.contains("client_roots");
        if (!all || context.input().request_state != "three-inputs")
          return ask({{"user_name", elicitation_request("What is your name?", "name", "string")},
                      {"greeting", sampling_request("Generate a greeting", 50)},
                      {"client_roots", roots_request()}},
                     "three-inputs");
        return text_result("received all three inputs: user_name, greeting, client_roots");
      });
}

}  // namespace kiln::tools::conformance
