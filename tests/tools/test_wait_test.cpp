// test_wait: the diagnostic tool client tests rely on for progress and cancellation.
#include <gtest/gtest.h>

#include <thread>

#include "kiln/mcp/tool_registry.h"
#include "kiln/tools/tool_factories.h"

namespace kiln::tools {
namespace {

using json = nlohmann::json;

TEST(TestWaitTool, ReportsOneIncreasingProgressPerStep) {
  mcp::Tool tool = make_test_wait_tool();
  std::vector<json> notes;
  mcp::CallContext context([&](json note) { notes.push_back(note); }, "token-1",
                           std::make_shared<std::atomic<bool>>(false),
                           std::make_shared<std::atomic<mcp::LogLevel>>(mcp::LogLevel::kInfo));
  auto result = tool.handler(json{{"duration_ms", 30}, {"steps", 3}}, context);
  EXPECT_EQ(result.structured["completed_steps"], 3);
  EXPECT_EQ(result.structured["cancelled"], false);
  ASSERT_EQ(notes.size(), 3u);
  for (size_t i = 0; i < notes.size(); ++i) {
    EXPECT_EQ(notes[i]["params"]["progressToken"], "token-1");
    EXPECT_EQ(notes[i]["params"]["progress"], static_cast<double>(i + 1));
    EXPECT_EQ(notes[i]["params"]["total"], 3.0);
  }
}

TEST(TestWaitTool, StopsSoonAfterCancellation) {
  mcp::Tool tool = make_test_wait_tool();
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  mcp::CallContext context([](json) {}, nullptr, cancelled,
                           std::make_shared<std::atomic<mcp::LogLevel>>(mcp::LogLevel::kInfo));
  std::thread canceller([cancelled] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    cancelled->store(true);
  });
  auto start = std::chrono::steady_clock::now();
  auto result = tool.handler(json{{"duration_ms", 20000}, {"steps", 4}}, context);
  auto elapsed = std::chrono::steady_clock::now() - start;
  canceller.join();
  EXPECT_EQ(result.structured["cancelled"], true);
  EXPECT_EQ(result.structured["completed_steps"], 0);
  EXPECT_LT(elapsed, std::chrono::seconds(5));  // far under the 20 s asked for
}

TEST(TestWaitTool, DeclarationPassesTheRegistryRules) {
  mcp::ToolRegistry registry;
  EXPECT_TRUE(registry.add(make_test_wait_tool()).ok());
}

}  // namespace
}  // namespace kiln::tools
