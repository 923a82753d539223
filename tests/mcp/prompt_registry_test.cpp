#include "kiln/mcp/prompt_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kiln::mcp {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

class PromptRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry.add(Prompt{"optimize",
                        "Optimize the kernel",
                        "the run's workflow",
                        {PromptArgument{"task", "the task name", true},
                         PromptArgument{"focus", "what to try", false}},
                        [](const std::map<std::string, std::string>& args) {
                          std::string text = "optimize " + args.at("task");
                          if (args.count("focus")) text += " focusing on " + args.at("focus");
                          return Result<std::string>(text);
                        }});
    registry.add(Prompt{
        "broken", "Broken", "cannot render", {}, [](const std::map<std::string, std::string>&) {
          return Result<std::string>(make_error("PROMPT.md is missing; pass --run-dir"));
        }});
  }
  PromptRegistry registry;
};

TEST_F(PromptRegistryTest, ListsPromptsByNameWithTheirArguments) {
  json prompts = registry.list()["prompts"];
  ASSERT_EQ(prompts.size(), 2u);
  EXPECT_EQ(prompts[0]["name"], "broken");
  EXPECT_EQ(prompts[1]["name"], "optimize");
  EXPECT_EQ(prompts[1]["title"], "Optimize the kernel");
  EXPECT_EQ(prompts[1]["description"], "the run's workflow");
  EXPECT_EQ(prompts[1]["arguments"],
            (json{{{"name", "task"}, {"description", "the task name"}, {"required", true}},
                  {{"name", "focus"}, {"description", "what to try"}, {"required", false}}}));
  EXPECT_EQ(prompts[0]["arguments"], json::array());
}

TEST_F(PromptRegistryTest, ContainsKnowsRegisteredNames) {
  EXPECT_TRUE(registry.contains("optimize"));
  EXPECT_FALSE(registry.contains("nope"));
}

TEST_F(PromptRegistryTest, GetRendersOneUserMessage) {
  auto prompt = registry.get("optimize", json{{"task", "fp16_gemm"}, {"focus", "tiling"}});
  ASSERT_TRUE(prompt.ok()) << prompt.error().message;
  EXPECT_EQ((*prompt)["description"], "the run's workflow");
  ASSERT_EQ((*prompt)["messages"].size(), 1u);
  const json& message = (*prompt)["messages"][0];
  EXPECT_EQ(message["role"], "user");
  EXPECT_EQ(message["content"],
            (json{{"type", "text"}, {"text", "optimize fp16_gemm focusing on tiling"}}));
}

TEST_F(PromptRegistryTest, OptionalArgumentMayBeLeftOut) {
  auto prompt = registry.get("optimize", json{{"task", "fp16_gemm"}});
  ASSERT_TRUE(prompt.ok()) << prompt.error().message;
  EXPECT_EQ((*prompt)["messages"][0]["content"]["text"], "optimize fp16_gemm");
}

TEST_F(PromptRegistryTest, MissingRequiredArgumentIsNamed) {
  auto prompt = registry.get("optimize", json::object());
  ASSERT_FALSE(prompt.ok());
  EXPECT_EQ(prompt.error().message, "prompt `optimize` needs the argument `task`");
  EXPECT_FALSE(registry.get("optimize", nullptr).ok());
}

TEST_F(PromptRegistryTest, UnknownArgumentIsNamed) {
  auto prompt = registry.get("optimize", json{{"task", "t"}, {"colour", "red"}});
  ASSERT_FALSE(prompt.ok());
  EXPECT_THAT(prompt.error().message, HasSubstr("has no argument `colour`"));
}

TEST_F(PromptRegistryTest, NonStringArgumentIsRefused) {
  auto prompt = registry.get("optimize", json{{"task", 3}});
  ASSERT_FALSE(prompt.ok());
  EXPECT_THAT(prompt.error().message, HasSubstr("`task` must be a string"));
}

TEST_F(PromptRegistryTest, UnknownPromptIsAnError) {
  auto prompt = registry.get("nope", json::object());
  ASSERT_FALSE(prompt.ok());
  EXPECT_THAT(prompt.error().message, HasSubstr("unknown prompt `nope`"));
}

TEST_F(PromptRegistryTest, RenderFailureIsPassedOn) {
  auto prompt = registry.get("broken", json::object());
  ASSERT_FALSE(prompt.ok());
  EXPECT_EQ(prompt.error().message, "PROMPT.md is missing; pass --run-dir");
}

}  // namespace
}  // namespace kiln::mcp
