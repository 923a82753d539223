// get_task, kiln://task and the optimize prompt, through a server built the way `kiln mcp` builds
// it.
#include <gtest/gtest.h>

#include "kiln/mcp/server.h"
#include "kiln/tools/toolbox.h"

namespace kiln::tools {
namespace {

using json = nlohmann::json;

class GetTaskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ToolboxConfig config;
    config.tasks_dir = KILN_TASKS_DIR;
    config.default_task = "fp16_gemm";
    ASSERT_TRUE(register_toolbox(server_, config).ok());
  }
  mcp::ToolResult call(const json& arguments) {
    auto context = mcp::CallContext::detached();
    return server_.tools().run("get_task", arguments, context);
  }
  mcp::Server server_{mcp::ServerInfo{}};
};

TEST_F(GetTaskTest, ReturnsTheDefaultTaskWhenNoNameIsGiven) {
  auto result = call(json::object());
  ASSERT_FALSE(result.is_error) << result.text;
  EXPECT_EQ(result.structured["name"], "fp16_gemm");
  EXPECT_EQ(result.structured["workloads"].size(), 10u);
  EXPECT_FALSE(result.structured["sim_workloads"].empty());
  EXPECT_EQ(result.structured["sha256"].get<std::string>().size(), 64u);
  EXPECT_NE(result.text.find("fp16_gemm"), std::string::npos);
  EXPECT_NE(result.text.find("starter"), std::string::npos);
}

TEST_F(GetTaskTest, TextCarriesTheWorkloadsAndTolerance) {
  auto result = call(json{{"name", "fp16_gemm"}});
  ASSERT_FALSE(result.is_error);
  EXPECT_NE(result.text.find("8192x8192x8192"), std::string::npos);
  EXPECT_NE(result.text.find("tolerance: atol"), std::string::npos);
  EXPECT_LT(result.text.size(), 10u * 1024u);
  EXPECT_LT(result.structured.dump().size(), 10u * 1024u);
}

TEST_F(GetTaskTest, UnknownTaskIsAnErrorListingTheTasks) {
  auto result = call(json{{"name", "no_such_task"}});
  ASSERT_TRUE(result.is_error);
  EXPECT_NE(result.text.find("no_such_task"), std::string::npos);
  EXPECT_NE(result.text.find("fp16_gemm"), std::string::npos);
}

TEST_F(GetTaskTest, NameMustMatchThePattern) {
  auto result = call(json{{"name", "../etc"}});
  ASSERT_TRUE(result.is_error);
  EXPECT_NE(result.text.find("argument `name`"), std::string::npos) << result.text;
}

TEST_F(GetTaskTest, OutputSatisfiesItsOwnOutputSchemaRequiredFields) {
  auto result = call(json::object());
  const mcp::Tool* tool = server_.tools().find("get_task");
  ASSERT_NE(tool, nullptr);
  // The success branch of the schema (the other is the shared error shape).
  ASSERT_TRUE(tool->output_schema.contains("anyOf"));
  for (const auto& field : tool->output_schema["anyOf"][0]["required"]) {
    EXPECT_TRUE(result.structured.contains(field.get<std::string>())) << field;
  }
}

TEST_F(GetTaskTest, TaskResourceHoldsTheSameContract) {
  auto read = server_.resources().read("kiln://task");
  ASSERT_TRUE(read.ok()) << read.error().message;
  const json& contents = (*read)["contents"][0];
  EXPECT_EQ(contents["mimeType"], "application/json");
  json contract = json::parse(contents["text"].get<std::string>());
  EXPECT_EQ(contract, call(json::object()).structured);
}

TEST_F(GetTaskTest, OptimizePromptIncludesTheTaskReadme) {
  auto prompt = server_.prompts().get("optimize", json::object());
  ASSERT_TRUE(prompt.ok()) << prompt.error().message;
  std::string text = (*prompt)["messages"][0]["content"]["text"];
  EXPECT_NE(text.find("get_task"), std::string::npos);
  EXPECT_GT(text.size(), 500u);
}

TEST_F(GetTaskTest, SelectsAnotherTaskByName) {
  auto result = call(json{{"name", "rmsnorm"}});
  ASSERT_FALSE(result.is_error) << result.text;
  EXPECT_EQ(result.structured["name"], "rmsnorm");
}

TEST_F(GetTaskTest, WithoutADefaultSeveralTasksAskForAName) {
  mcp::Server server{mcp::ServerInfo{}};
  ToolboxConfig config;
  config.tasks_dir = KILN_TASKS_DIR;
  ASSERT_TRUE(register_toolbox(server, config).ok());
  auto context = mcp::CallContext::detached();
  auto result = server.tools().run("get_task", json::object(), context);
  ASSERT_TRUE(result.is_error);
  EXPECT_NE(result.text.find("fp16_gemm"), std::string::npos) << result.text;
  EXPECT_NE(result.text.find("rmsnorm"), std::string::npos) << result.text;
}

TEST_F(GetTaskTest, MissingTasksDirSaysHowToFixIt) {
  mcp::Server server{mcp::ServerInfo{}};
  ToolboxConfig config;
  config.tasks_dir = "/nonexistent/kiln/tasks";
  ASSERT_TRUE(register_toolbox(server, config).ok());
  auto context = mcp::CallContext::detached();
  auto result = server.tools().run("get_task", json::object(), context);
  ASSERT_TRUE(result.is_error);
  EXPECT_NE(result.text.find("KILN_TASKS_DIR"), std::string::npos) << result.text;
}

}  // namespace
}  // namespace kiln::tools
