// test_missing_capability: declares that it needs the client's sampling capability,
// so a client that did not declare it gets -32021 (scenario server-stateless).
#include "fixtures.h"

namespace kiln::tools::conformance {

mcp::Tool make_test_missing_capability_tool() {
  auto tool = fixture_tool(
      "test_missing_capability", "Needs sampling (conformance)",
      "declares that it needs the client's sampling capability; answers only clients that "
      "declared it.",
      [](mcp::CallContext&) { return text_result("the client declared sampling"); });
  tool.required_client_capabilities = {{"sampling", nlohmann::json::object()}};
  return tool;
}

}  // namespace kiln::tools::conformance
