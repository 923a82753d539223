// test_tool_with_logging: three info log notifications 50 ms apart (scenario
// tools-call-with-logging, 2025 revisions: the level comes from logging/setLevel).
#include <chrono>
#include <thread>

#include "fixtures.h"

namespace kiln::tools::conformance {

mcp::Tool make_test_tool_with_logging_tool() {
  return fixture_tool("test_tool_with_logging", "Logs while it runs (conformance)",
                      "sends three info log notifications 50 ms apart.",
                      [](mcp::CallContext& context) {
                        const char* steps[] = {"Tool execution started", "Tool processing data",
                                               "Tool execution completed"};
                        for (int i = 0; i < 3; ++i) {
                          if (i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
                          context.log(mcp::LogLevel::kInfo, "conformance", steps[i]);
                        }
                        return text_result("Tool with logging executed successfully");
                      });
}

}  // namespace kiln::tools::conformance
