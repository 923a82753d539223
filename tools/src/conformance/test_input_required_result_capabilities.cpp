// test_input_required_result_capabilities: asks only through the capabilities the
// client declared (scenario input-required-result-capability-check).
#include "fixtures.h"

namespace kiln::tools::conformance {

using json = nlohmann::json;

mcp::Tool make_test_input_required_result_capabilities_tool() {
  return fixture_tool(
      "test_input_required_result_capabilities",
      "Asks within the client's capabilities (conformance)",
      "asks for input only through the capabilities (elicitation, sampling, roots) the client "
      "declared.",
      [](mcp::CallContext& context) {
        const auto& input = context.input();
        const json& declared = input.client_capabilities;
        json requests = json::object();
        if (declared.contains("elicitation") && !input.responses.contains("user_name"))
          requests["user_name"] = elicitation_request("What is your name?", "name", "string");
        if (declared.contains("sampling") && !input.responses.contains("greeting"))
          requests["greeting"] = sampling_request("Generate a greeting", 50);
        if (declared.contains("roots") && !input.responses.contains("client_roots"))
          requests["client_roots"] = roots_request();
        if (!requests.empty()) return ask(std::move(requests));
        return text_result("every input the client can give was given");
      });
}

}  // namespace kiln::tools::conformance
