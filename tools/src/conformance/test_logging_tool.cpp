// test_logging_tool: logs at info (scenario server-stateless, 2026-07-28: a request
// whose _meta sets no logLevel must get no notifications/message).
#include "fixtures.h"

namespace kiln::tools::conformance {

mcp::Tool make_test_logging_tool() {
  return fixture_tool("test_logging_tool", "Logs once (conformance)",
                      "sends one info log notification when the request's log level allows.",
                      [](mcp::CallContext& context) {
                        context.log(mcp::LogLevel::kInfo, "conformance", "test_logging_tool ran");
                        return text_result("logged once, where the request's log level allows");
                      });
}

}  // namespace kiln::tools::conformance
