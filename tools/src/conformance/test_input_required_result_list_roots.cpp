// test_input_required_result_list_roots: asks for the client's roots, then names
// them (scenario input-required-result-basic-list-roots).
#include "fixtures.h"

namespace kiln::tools::conformance {

using json = nlohmann::json;

mcp::Tool make_test_input_required_result_list_roots_tool() {
  return fixture_tool(
      "test_input_required_result_list_roots", "Asks for the roots (conformance)",
      "asks for the client's roots through an input_required result, then lists their URIs.",
      [](mcp::CallContext& context) {
        const json& responses = context.input().responses;
        if (!responses.contains("client_roots")) return ask({{"client_roots", roots_request()}});
        std::string uris;
        const json& answer = responses["client_roots"];
        if (answer.is_object() && answer.contains("roots") && answer["roots"].is_array())
          for (const auto& root : answer["roots"])
            if (root.is_object() && root.contains("uri") && root["uri"].is_string())
              uris += (uris.empty() ? "" : ", ") + root["uri"].get<std::string>();
        return text_result("Client roots: " + (uris.empty() ? std::string("none") : uris));
      });
}

}  // namespace kiln::tools::conformance
