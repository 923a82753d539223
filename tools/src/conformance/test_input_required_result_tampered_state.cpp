// test_input_required_result_tampered_state: hands out request state; the session
// refuses a retry whose state was altered, before this handler runs (scenario
// input-required-result-tampered-state).
#include "fixtures.h"

namespace kiln::tools::conformance {

mcp::Tool make_test_input_required_result_tampered_state_tool() {
  return fixture_tool(
      "test_input_required_result_tampered_state", "Guards its request state (conformance)",
      "hands out sealed requestState; a retry with altered state is refused with -32602.",
      [](mcp::CallContext& context) {
        const auto& input = context.input();
        if (input.request_state != "untampered" || !input.responses.contains("confirm"))
          return ask({{"confirm", elicitation_request("Please confirm", "ok", "boolean")}},
                     "untampered");
        return text_result("the requestState came back intact");
      });
}

}  // namespace kiln::tools::conformance
