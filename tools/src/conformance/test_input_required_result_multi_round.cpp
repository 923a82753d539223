// test_input_required_result_multi_round: asks a name, then a colour (a second
// round with new state), then answers (scenario input-required-result-multi-round).
#include "fixtures.h"

namespace kiln::tools::conformance {

mcp::Tool make_test_input_required_result_multi_round_tool() {
  return fixture_tool(
      "test_input_required_result_multi_round", "Asks in two rounds (conformance)",
      "asks for a name, then for a favourite colour, each in its own input_required round.",
      [](mcp::CallContext& context) {
        const auto& input = context.input();
        const std::string& state = input.request_state;
        if (state.rfind("round-2:", 0) == 0) {
          std::string color = elicited(input, "step2", "color");
          if (!color.empty())
            return text_result(state.substr(8) + "'s favourite colour is " + color);
        }
        std::string name = state == "round-1" ? elicited(input, "step1", "name") : "";
        if (!name.empty() || state.rfind("round-2:", 0) == 0) {
          std::string who = name.empty() ? state.substr(8) : name;
          return ask({{"step2", elicitation_request("Step 2: What is your favorite color?", "color",
                                                    "string")}},
                     "round-2:" + who);
        }
        return ask({{"step1", elicitation_request("Step 1: What is your name?", "name", "string")}},
                   "round-1");
      });
}

}  // namespace kiln::tools::conformance
