#include "kiln/mcp/resource_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kiln::mcp {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

TEST(MatchUriTemplate, BindsEachVariable) {
  auto variables =
      match_uri_template("kiln://zoo/{id}/{file}", "kiln://zoo/cutlass_gemm/kernel.cu");
  ASSERT_TRUE(variables.has_value());
  EXPECT_EQ(*variables, (TemplateVariables{{"id", "cutlass_gemm"}, {"file", "kernel.cu"}}));
}

TEST(MatchUriTemplate, LiteralTemplateMatchesOnlyItself) {
  EXPECT_EQ(match_uri_template("kiln://frontier", "kiln://frontier"), TemplateVariables{});
  EXPECT_FALSE(match_uri_template("kiln://frontier", "kiln://frontiers").has_value());
  EXPECT_FALSE(match_uri_template("kiln://frontier", "kiln://front").has_value());
}

TEST(MatchUriTemplate, VariableStopsAtTheLiteralThatFollowsIt) {
  auto variables = match_uri_template("kiln://ptx/{section}.md", "kiln://ptx/mma.md");
  ASSERT_TRUE(variables.has_value());
  EXPECT_EQ(variables->at("section"), "mma");
}

TEST(MatchUriTemplate, RejectsAMissingSegment) {
  EXPECT_FALSE(match_uri_template("kiln://zoo/{id}/{file}", "kiln://zoo/cutlass_gemm").has_value());
  EXPECT_FALSE(
      match_uri_template("kiln://zoo/{id}/{file}", "kiln://zoo/cutlass_gemm/").has_value());
}

TEST(MatchUriTemplate, RejectsAnEmptyVariable) {
  EXPECT_FALSE(match_uri_template("kiln://zoo/{id}/{file}", "kiln://zoo//kernel.cu").has_value());
  EXPECT_FALSE(match_uri_template("kiln://ptx/{section}", "kiln://ptx/").has_value());
}

TEST(MatchUriTemplate, VariableDoesNotSpanASlash) {
  EXPECT_FALSE(match_uri_template("kiln://zoo/{id}/{file}", "kiln://zoo/a/b/c.cu").has_value());
  EXPECT_FALSE(match_uri_template("kiln://ptx/{section}", "kiln://ptx/a/b").has_value());
}

TEST(MatchUriTemplate, RejectsADifferentPrefixOrScheme) {
  EXPECT_FALSE(match_uri_template("kiln://zoo/{id}/{file}", "kiln://zool/a/b").has_value());
  EXPECT_FALSE(match_uri_template("kiln://zoo/{id}/{file}", "file://zoo/a/b").has_value());
  EXPECT_FALSE(match_uri_template("kiln://zoo/{id}/{file}", "").has_value());
}

TEST(MatchUriTemplate, UnclosedBraceMatchesNothing) {
  EXPECT_FALSE(match_uri_template("kiln://zoo/{id", "kiln://zoo/x").has_value());
}

class ResourceRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry.add(
        Resource{"kiln://task", "task", "The task", "the task contract", "application/json", [] {
                   return Result<ResourceContents>(ResourceContents{"application/json", "{}"});
                 }});
    registry.add(Resource{
        "kiln://broken", "broken", "Broken", "cannot be read", "text/plain",
        [] { return Result<ResourceContents>(make_error("the file went away; rebuild")); }});
    registry.add(ResourceTemplate{"kiln://zoo/{id}/{file}", "zoo", "Zoo file", "an entry's file",
                                  "text/plain", [](const TemplateVariables& v) {
                                    return Result<ResourceContents>(ResourceContents{
                                        "text/x-cuda", v.at("id") + ":" + v.at("file")});
                                  }});
  }
  ResourceRegistry registry;
};

TEST_F(ResourceRegistryTest, ListsFixedResourcesWithTheirFields) {
  json resources = registry.list()["resources"];
  ASSERT_EQ(resources.size(), 2u);
  EXPECT_EQ(resources[0], (json{{"uri", "kiln://task"},
                                {"name", "task"},
                                {"title", "The task"},
                                {"description", "the task contract"},
                                {"mimeType", "application/json"}}));
}

TEST_F(ResourceRegistryTest, ListsTemplatesSeparately) {
  json templates = registry.list_templates()["resourceTemplates"];
  ASSERT_EQ(templates.size(), 1u);
  EXPECT_EQ(templates[0]["uriTemplate"], "kiln://zoo/{id}/{file}");
  EXPECT_EQ(templates[0]["name"], "zoo");
  EXPECT_EQ(templates[0]["mimeType"], "text/plain");
}

TEST_F(ResourceRegistryTest, ReadsAFixedResource) {
  auto contents = registry.read("kiln://task");
  ASSERT_TRUE(contents.ok()) << contents.error().message;
  EXPECT_EQ(*contents,
            (json{{"contents",
                   {{{"uri", "kiln://task"}, {"mimeType", "application/json"}, {"text", "{}"}}}}}));
}

TEST_F(ResourceRegistryTest, ReadsThroughATemplateWithItsVariables) {
  auto contents = registry.read("kiln://zoo/wgmma/main.cu");
  ASSERT_TRUE(contents.ok()) << contents.error().message;
  const json& entry = (*contents)["contents"][0];
  EXPECT_EQ(entry["uri"], "kiln://zoo/wgmma/main.cu");
  EXPECT_EQ(entry["text"], "wgmma:main.cu");
  EXPECT_EQ(entry["mimeType"], "text/x-cuda");
}

TEST_F(ResourceRegistryTest, UnknownUriIsAnErrorThatSaysWhatToDo) {
  auto contents = registry.read("kiln://nothing");
  ASSERT_FALSE(contents.ok());
  EXPECT_THAT(contents.error().message, HasSubstr("unknown resource kiln://nothing"));
  EXPECT_THAT(contents.error().message, HasSubstr("resources/list"));
  EXPECT_FALSE(registry.knows("kiln://nothing"));
  EXPECT_FALSE(registry.knows("kiln://zoo/only_id"));
}

TEST_F(ResourceRegistryTest, KnownUriThatFailsToReadPassesTheReasonOn) {
  auto contents = registry.read("kiln://broken");
  ASSERT_FALSE(contents.ok());
  EXPECT_EQ(contents.error().message, "the file went away; rebuild");
  EXPECT_TRUE(registry.knows("kiln://broken"));
}

TEST_F(ResourceRegistryTest, KnowsFixedAndTemplatedUris) {
  EXPECT_TRUE(registry.knows("kiln://task"));
  EXPECT_TRUE(registry.knows("kiln://zoo/a/b"));
}

}  // namespace
}  // namespace kiln::mcp
