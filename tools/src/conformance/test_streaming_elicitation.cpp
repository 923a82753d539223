// test_streaming_elicitation: needs the user's answer; where the revision has
// input-required results it asks through one, never through a request of its own on
// the response stream (scenario server-stateless).
#include "fixtures.h"

namespace kiln::tools::conformance {

mcp::Tool make_test_streaming_elicitation_tool() {
  return fixture_tool(
      "test_streaming_elicitation", "Asks on the response stream (conformance)",
      "reports progress, then asks the user through an input_required result.",
      [](mcp::CallContext& context) {
        context.progress(1, 2, "about to ask the user");
        std::string answer = elicited(context.input(), "answer", "answer");
        if (answer.empty() && context.input().can_ask)
          return ask({{"answer", elicitation_request("Anything to add?", "answer", "string")}});
        return text_result(answer.empty() ? "no answer" : "the user said: " + answer);
      });
}

}  // namespace kiln::tools::conformance
