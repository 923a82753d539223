// test_wait: a diagnostic tool that waits in steps, reporting progress and
// stopping when cancelled. It exists so client tests can exercise progress and
// cancellation end to end; it is registered only with --test-tools.
#include <chrono>
#include <thread>

#include "kiln/tools/tool_factories.h"

namespace kiln::tools {

using json = nlohmann::json;

mcp::Tool make_test_wait_tool() {
  mcp::Tool tool;
  tool.name = "test_wait";
  tool.title = "Wait in steps (diagnostic)";
  tool.description =
      "Diagnostic for MCP client tests: waits duration_ms in `steps` equal steps, sends a progress "
      "notification "
      "after each step when the request carries a progressToken, and stops early when cancelled. "
      "Does no other "
      "work.";
  tool.input_schema =
      json{{"type", "object"},
           {"properties",
            {{"duration_ms", {{"type", "integer"}, {"minimum", 0}, {"maximum", 600000}}},
             {"steps", {{"type", "integer"}, {"minimum", 1}, {"maximum", 1000}}}}},
           {"required", {"duration_ms", "steps"}},
           {"additionalProperties", false}};
  tool.output_schema =
      json{{"type", "object"},
           {"properties",
            {{"completed_steps", {{"type", "integer"}}}, {"cancelled", {{"type", "boolean"}}}}},
           {"required", {"completed_steps", "cancelled"}}};
  tool.annotations = {
      .read_only = true, .destructive = false, .idempotent = true, .open_world = false};
  tool.handler = [](const json& arguments, mcp::CallContext& context) {
    const int steps = arguments["steps"].get<int>();
    const auto step =
        std::chrono::microseconds(arguments["duration_ms"].get<int64_t>() * 1000 / steps);
    int completed = 0;
    while (completed < steps && !context.cancelled()) {
      // Sleep in short slices so a cancellation is noticed within ~10 ms.
      auto until = std::chrono::steady_clock::now() + step;
      while (std::chrono::steady_clock::now() < until && !context.cancelled())
        std::this_thread::sleep_for(
            std::min<std::chrono::microseconds>(step, std::chrono::milliseconds(10)));
      if (context.cancelled()) break;
      ++completed;
      context.progress(completed, steps,
                       "step " + std::to_string(completed) + " of " + std::to_string(steps));
    }
    mcp::ToolResult result;
    result.structured = json{{"completed_steps", completed}, {"cancelled", context.cancelled()}};
    result.text =
        "completed " + std::to_string(completed) + " of " + std::to_string(steps) + " steps";
    return result;
  };
  return tool;
}

}  // namespace kiln::tools
