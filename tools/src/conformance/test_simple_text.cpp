// test_simple_text: one text block (scenario tools-call-simple-text).
#include "fixtures.h"

namespace kiln::tools::conformance {

mcp::Tool make_test_simple_text_tool() {
  return fixture_tool(
      "test_simple_text", "Simple text (conformance)", "returns one text content block.",
      [](mcp::CallContext&) { return text_result("This is a simple text response for testing."); });
}

}  // namespace kiln::tools::conformance
