// test_tool_with_progress: progress 0, 50 and 100 of 100, 50 ms apart (scenario
// tools-call-with-progress); sent only when the request carries a progressToken.
#include <chrono>
#include <thread>

#include "fixtures.h"

namespace kiln::tools::conformance {

mcp::Tool make_test_tool_with_progress_tool() {
  return fixture_tool(
      "test_tool_with_progress", "Reports progress (conformance)",
      "sends progress 0, 50 and 100 of 100, 50 ms apart.", [](mcp::CallContext& context) {
        for (int done = 0; done <= 100; done += 50) {
          if (done) std::this_thread::sleep_for(std::chrono::milliseconds(50));
          context.progress(done, 100, "Completed step " + std::to_string(done) + " of 100");
        }
        return text_result("progress reported: 0, 50, 100 of 100");
      });
}

}  // namespace kiln::tools::conformance
