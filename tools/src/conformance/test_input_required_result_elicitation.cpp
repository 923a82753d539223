// test_input_required_result_elicitation: asks the user's name, then greets it
// (scenarios input-required-result-basic-elicitation, -missing-input-response,
// -result-type, -ignore-extra-params). Without the answer it asks again.
#include "fixtures.h"

namespace kiln::tools::conformance {

mcp::Tool make_test_input_required_result_elicitation_tool() {
  return fixture_tool(
      "test_input_required_result_elicitation", "Asks for a name (conformance)",
      "asks the user's name through an input_required result, then greets them.",
      [](mcp::CallContext& context) {
        std::string name = elicited(context.input(), "user_name", "name");
        if (name.empty())
          return ask({{"user_name", elicitation_request("What is your name?", "name", "string")}});
        return text_result("Hello, " + name + "!");
      });
}

}  // namespace kiln::tools::conformance
