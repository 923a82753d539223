// test_error_handling: a result with isError (scenario tools-call-error).
#include "fixtures.h"

namespace kiln::tools::conformance {

mcp::Tool make_test_error_handling_tool() {
  return fixture_tool(
      "test_error_handling", "Always fails (conformance)", "always answers with an isError result.",
      [](mcp::CallContext&) {
        return mcp::ToolResult::error("This tool intentionally returns an error for testing");
      });
}

}  // namespace kiln::tools::conformance
