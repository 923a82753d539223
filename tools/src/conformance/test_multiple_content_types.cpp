// test_multiple_content_types: text, image and resource blocks in one result
// (scenario tools-call-mixed-content).
#include "fixtures.h"

namespace kiln::tools::conformance {

mcp::Tool make_test_multiple_content_types_tool() {
  return fixture_tool(
      "test_multiple_content_types", "Mixed content (conformance)",
      "returns text, image and embedded resource content blocks.", [](mcp::CallContext&) {
        auto result = text_result("Multiple content types test:");
        result.extra_content.push_back(
            {{"type", "image"}, {"data", kPngBase64}, {"mimeType", "image/png"}});
        result.extra_content.push_back({{"type", "resource"},
                                        {"resource",
                                         {{"uri", "test://mixed-content-resource"},
                                          {"mimeType", "application/json"},
                                          {"text", R"({"test":"data","value":123})"}}}});
        return result;
      });
}

}  // namespace kiln::tools::conformance
