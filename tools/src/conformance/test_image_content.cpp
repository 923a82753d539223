// test_image_content: an image content block (scenario tools-call-image).
#include "fixtures.h"

namespace kiln::tools::conformance {

mcp::Tool make_test_image_content_tool() {
  return fixture_tool("test_image_content", "Image content (conformance)",
                      "returns a 1x1 PNG image content block.", [](mcp::CallContext&) {
                        auto result = text_result("a 1x1 red PNG");
                        result.extra_content.push_back(
                            {{"type", "image"}, {"data", kPngBase64}, {"mimeType", "image/png"}});
                        return result;
                      });
}

}  // namespace kiln::tools::conformance
