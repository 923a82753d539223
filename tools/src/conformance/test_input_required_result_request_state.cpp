// test_input_required_result_request_state: asks for a confirmation with request
// state, and says "state-ok" when the retry brings that state back (scenario
// input-required-result-request-state; kiln's seal guards the state).
#include "fixtures.h"

namespace kiln::tools::conformance {

mcp::Tool make_test_input_required_result_request_state_tool() {
  return fixture_tool(
      "test_input_required_result_request_state", "Round-trips request state (conformance)",
      "asks for a confirmation with requestState; answers state-ok when it comes back intact.",
      [](mcp::CallContext& context) {
        const auto& input = context.input();
        if (!input.responses.contains("confirm") || input.request_state != "awaiting-confirm")
          return ask({{"confirm", elicitation_request("Please confirm", "ok", "boolean")}},
                     "awaiting-confirm");
        return text_result("state-ok: the requestState came back as handed out");
      });
}

}  // namespace kiln::tools::conformance
