// test_embedded_resource: an embedded text resource (scenario tools-call-embedded-resource).
#include "fixtures.h"

namespace kiln::tools::conformance {

mcp::Tool make_test_embedded_resource_tool() {
  return fixture_tool(
      "test_embedded_resource", "Embedded resource (conformance)",
      "returns an embedded text resource content block.", [](mcp::CallContext&) {
        auto result = text_result("an embedded resource follows");
        result.extra_content.push_back({{"type", "resource"},
                                        {"resource",
                                         {{"uri", "test://embedded-resource"},
                                          {"mimeType", "text/plain"},
                                          {"text", "This is an embedded resource content."}}}});
        return result;
      });
}

}  // namespace kiln::tools::conformance
