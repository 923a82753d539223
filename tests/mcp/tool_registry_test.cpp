#include "kiln/mcp/tool_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "kiln/mcp/schema_validator.h"
#include "test_server.h"

namespace kiln::mcp {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;
using testing::make_tool;

// The error message of a refused declaration, or "" when it was accepted.
std::string refusal(ToolRegistry& registry, Tool tool) {
  Status status = registry.add(std::move(tool));
  return status ? "" : status.error().message;
}

Tool counting_tool(int* runs) {
  Tool tool = make_tool("count");
  tool.input_schema =
      testing::flat_object_schema({{"steps", {{"type", "integer"}, {"minimum", 1}}}}, {"steps"});
  tool.handler = [runs](const json& arguments, CallContext&) {
    ++*runs;
    ToolResult result;
    result.structured = json{{"steps", arguments["steps"]}};
    result.text = "counted " + arguments["steps"].dump();
    return result;
  };
  return tool;
}

TEST(ToolRegistryAdd, AcceptsAWellFormedTool) {
  ToolRegistry registry;
  EXPECT_EQ(refusal(registry, make_tool("get_task")), "");
  EXPECT_TRUE(registry.contains("get_task"));
  ASSERT_NE(registry.find("get_task"), nullptr);
  EXPECT_EQ(registry.find("get_task")->title, "Test tool get_task");
  EXPECT_EQ(registry.find("missing"), nullptr);
}

// The MCP 2025-11-25 tool-name rule: 1 to 128 of A-Z, a-z, 0-9, '_', '-', '.'.
TEST(ToolRegistryAdd, AcceptsEveryCharacterTheSpecificationAllows) {
  ToolRegistry registry;
  for (const char* name :
       {"get-task", "GetTask", "test_elicitation_sep1034_defaults", "admin.list", "x"})
    EXPECT_EQ(refusal(registry, make_tool(name)), "") << name;
  EXPECT_EQ(refusal(registry, make_tool(std::string(128, 'a'))), "");
  EXPECT_TRUE(registry.contains("test_elicitation_sep1034_defaults"));
}

TEST(ToolRegistryAdd, RefusesANameOutsideTheSpecificationsRule) {
  ToolRegistry registry;
  for (const std::string& name :
       {std::string("get task"), std::string(""), std::string("a/b"), std::string("caf\xc3\xa9"),
        std::string("a,b"), std::string(129, 'a')}) {
    EXPECT_THAT(refusal(registry, make_tool(name)), HasSubstr("^[A-Za-z0-9_.-]{1,128}$")) << name;
    EXPECT_FALSE(registry.contains(name));
  }
}

TEST(ToolRegistryAdd, RefusesADuplicateName) {
  ToolRegistry registry;
  ASSERT_EQ(refusal(registry, make_tool("compile")), "");
  EXPECT_THAT(refusal(registry, make_tool("compile")), HasSubstr("tool `compile`: declared twice"));
}

TEST(ToolRegistryAdd, RefusesAnEmptyTitle) {
  ToolRegistry registry;
  Tool tool = make_tool("compile");
  tool.title = "";
  EXPECT_THAT(refusal(registry, tool), HasSubstr("needs a title"));
}

TEST(ToolRegistryAdd, RefusesADescriptionOfOneKilobyteOrMore) {
  ToolRegistry registry;
  Tool big = make_tool("big");
  big.description = std::string(1024, 'x');
  EXPECT_THAT(refusal(registry, big), HasSubstr("under 1 KB (is 1024 bytes)"));
  Tool just_under = make_tool("just_under");
  just_under.description = std::string(1023, 'x');
  EXPECT_EQ(refusal(registry, just_under), "");
}

TEST(ToolRegistryAdd, RefusesAnEmptyDescription) {
  ToolRegistry registry;
  Tool tool = make_tool("quiet");
  tool.description = "";
  EXPECT_THAT(refusal(registry, tool), HasSubstr("description must be non-empty"));
}

TEST(ToolRegistryAdd, RefusesAnInputSchemaThatIsNotFlat) {
  ToolRegistry registry;
  Tool tool = make_tool("compile");
  tool.input_schema =
      json{{"type", "object"},
           {"properties", {{"x", {{"anyOf", {{{"type", "string"}}, {{"type", "integer"}}}}}}}}};
  EXPECT_THAT(refusal(registry, tool), HasSubstr("`anyOf` is not allowed"));
  tool.input_schema = json{{"type", "array"}};
  EXPECT_THAT(refusal(registry, tool), HasSubstr("tool `compile`: input schema"));
}

TEST(ToolRegistryAdd, RefusesAnOutputSchemaThatIsNotAnObjectSchema) {
  ToolRegistry registry;
  Tool tool = make_tool("compile");
  tool.output_schema = json{{"type", "string"}};
  EXPECT_THAT(refusal(registry, tool), HasSubstr("outputSchema"));
  tool.output_schema = nullptr;
  EXPECT_THAT(refusal(registry, tool), HasSubstr("outputSchema"));
  EXPECT_FALSE(registry.contains("compile"));
}

TEST(ToolRegistryAdd, RefusesAToolWithoutHandler) {
  ToolRegistry registry;
  Tool tool = make_tool("compile");
  tool.handler = nullptr;
  EXPECT_THAT(refusal(registry, tool), HasSubstr("has no handler"));
}

TEST(ToolRegistryList, IsSortedByName) {
  ToolRegistry registry;
  for (const char* name : {"zeta", "alpha", "mid"})
    ASSERT_EQ(refusal(registry, make_tool(name)), "");
  json tools = registry.list()["tools"];
  ASSERT_EQ(tools.size(), 3u);
  EXPECT_EQ(tools[0]["name"], "alpha");
  EXPECT_EQ(tools[1]["name"], "mid");
  EXPECT_EQ(tools[2]["name"], "zeta");
}

TEST(ToolRegistryList, CarriesTitleSchemasAndAllFourHints) {
  ToolRegistry registry;
  Tool tool = make_tool("benchmark");
  tool.title = "Benchmark a candidate";
  tool.description = "Times the candidate.";
  tool.input_schema = testing::flat_object_schema({{"source", {{"type", "string"}}}}, {"source"});
  tool.output_schema =
      json{{"type", "object"}, {"properties", {{"result_id", {{"type", "string"}}}}}};
  tool.annotations = {
      .read_only = false, .destructive = true, .idempotent = false, .open_world = true};
  ASSERT_EQ(refusal(registry, tool), "");

  json entry = registry.list()["tools"][0];
  EXPECT_EQ(entry["name"], "benchmark");
  EXPECT_EQ(entry["title"], "Benchmark a candidate");
  EXPECT_EQ(entry["description"], "Times the candidate.");
  EXPECT_EQ(entry["inputSchema"], tool.input_schema);
  // The declared schema, with the shared error shape the registry adds.
  EXPECT_EQ(entry["outputSchema"], *output_schema_with_error(tool.output_schema));
  EXPECT_EQ(entry["outputSchema"]["properties"]["result_id"], json({{"type", "string"}}));
  const json& hints = entry["annotations"];
  EXPECT_EQ(hints["readOnlyHint"], false);
  EXPECT_EQ(hints["destructiveHint"], true);
  EXPECT_EQ(hints["idempotentHint"], false);
  EXPECT_EQ(hints["openWorldHint"], true);
}

TEST(ToolRegistryList, EmptyRegistryListsNoTools) {
  ToolRegistry registry;
  EXPECT_EQ(registry.list(), json({{"tools", json::array()}}));
}

TEST(ToolRegistryCall, InvalidArgumentIsAnErrorResultNamingItAndTheHandlerNeverRuns) {
  ToolRegistry registry;
  int runs = 0;
  ASSERT_EQ(refusal(registry, counting_tool(&runs)), "");
  CallContext context = CallContext::detached();

  json result = registry.call("count", json{{"steps", "many"}}, context);
  EXPECT_EQ(result["isError"], true);
  EXPECT_THAT(result["content"][0]["text"].get<std::string>(), HasSubstr("argument `steps`"));
  const json& error = result["structuredContent"]["error"];
  EXPECT_EQ(error["code"], "invalid_arguments");
  EXPECT_THAT(error["message"].get<std::string>(), HasSubstr("argument `steps`"));
  EXPECT_THAT(result["content"][0]["text"].get<std::string>(),
              HasSubstr(error["next_step"].get<std::string>()));

  json missing = registry.call("count", json::object(), context);
  EXPECT_EQ(missing["isError"], true);
  EXPECT_THAT(missing["content"][0]["text"].get<std::string>(),
              HasSubstr("missing required argument `steps`"));

  json too_small = registry.call("count", json{{"steps", 0}}, context);
  EXPECT_EQ(too_small["isError"], true);
  EXPECT_EQ(runs, 0);
}

TEST(ToolRegistryCall, NullArgumentsAreTreatedAsAnEmptyObject) {
  ToolRegistry registry;
  ASSERT_EQ(refusal(registry, make_tool("noargs")), "");
  CallContext context = CallContext::detached();
  EXPECT_EQ(registry.call("noargs", nullptr, context)["isError"], false);
}

TEST(ToolRegistryCall, SuccessCarriesStructuredContentAndText) {
  ToolRegistry registry;
  int runs = 0;
  ASSERT_EQ(refusal(registry, counting_tool(&runs)), "");
  CallContext context = CallContext::detached();
  json result = registry.call("count", json{{"steps", 3}}, context);
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(result["isError"], false);
  EXPECT_EQ(result["structuredContent"], json({{"steps", 3}}));
  ASSERT_EQ(result["content"].size(), 1u);
  EXPECT_EQ(result["content"][0]["type"], "text");
  EXPECT_EQ(result["content"][0]["text"], "counted 3");
}

TEST(ToolRegistryCall, HandlerExceptionBecomesAnErrorResult) {
  ToolRegistry registry;
  ASSERT_EQ(refusal(registry, testing::throwing_tool()), "");
  CallContext context = CallContext::detached();
  json result = registry.call("fail", json::object(), context);
  EXPECT_EQ(result["isError"], true);
  EXPECT_THAT(result["content"][0]["text"].get<std::string>(), HasSubstr("the handler broke"));
  EXPECT_EQ(result["structuredContent"]["error"]["code"], "internal_error");
  EXPECT_THAT(result["structuredContent"]["error"]["message"].get<std::string>(),
              HasSubstr("the handler broke"));
}

TEST(ToolRegistryCall, ErrorResultFromTheHandlerCarriesTheErrorObject) {
  ToolRegistry registry;
  Tool tool = make_tool("no_gpu");
  tool.handler = [](const json&, CallContext&) {
    return ToolResult::error(ErrorCode::kNoRunner, "no GPU here", "run benchmark on a GPU host");
  };
  ASSERT_EQ(refusal(registry, tool), "");
  CallContext context = CallContext::detached();
  json result = registry.call("no_gpu", json::object(), context);
  EXPECT_EQ(result["isError"], true);
  EXPECT_EQ(result["content"][0]["text"], "no GPU here\nnext: run benchmark on a GPU host");
  EXPECT_EQ(result["structuredContent"], json({{"error",
                                                {{"code", "no_runner"},
                                                 {"message", "no GPU here"},
                                                 {"next_step", "run benchmark on a GPU host"}}}}));
}

TEST(ToolRegistryCall, AnErrorResultWithoutTheErrorObjectGetsOneAndItsTextSaysIt) {
  ToolRegistry registry;
  Tool tool = make_tool("bare");
  tool.handler = [](const json&, CallContext&) {
    ToolResult result;
    result.structured = json{{"partial", 1}};
    result.text = "it broke";
    result.is_error = true;
    return result;
  };
  ASSERT_EQ(refusal(registry, tool), "");
  CallContext context = CallContext::detached();
  json result = registry.call("bare", json::object(), context);
  EXPECT_EQ(result["structuredContent"]["partial"], 1);
  const json& error = result["structuredContent"]["error"];
  EXPECT_EQ(error["code"], "failed");
  EXPECT_EQ(error["message"], "it broke");
  EXPECT_EQ(error["next_step"], "");  // the message is all a bare failure says
  EXPECT_EQ(result["content"][0]["text"], "it broke");
}

TEST(ToolRegistryCall, FailKeepsTheFactsOfTheWorkBesideTheError) {
  ToolResult result;
  result.structured = json{{"status", "failed"}, {"workloads", json::array({"a"})}};
  result.fail(ErrorCode::kWrongAnswer, "workload a: 3 mismatches");
  EXPECT_TRUE(result.is_error);
  EXPECT_EQ(result.structured["status"], "failed");
  EXPECT_EQ(result.structured["error"]["code"], "wrong_answer");
  EXPECT_FALSE(result.structured["error"]["next_step"].get<std::string>().empty());
}

TEST(ToolRegistryAdd, EveryOutputSchemaAdmitsTheSharedErrorShape) {
  ToolRegistry registry;
  Tool tool = make_tool("shaped");
  tool.output_schema = {{"type", "object"},
                        {"properties", {{"steps", {{"type", "integer"}}}}},
                        {"required", {"steps"}},
                        {"additionalProperties", false}};
  ASSERT_EQ(refusal(registry, tool), "");
  const json& schema = registry.find("shaped")->output_schema;
  EXPECT_EQ(schema["properties"]["error"], error_schema());
  EXPECT_FALSE(schema.contains("required"));
  EXPECT_EQ(validate_against_schema(schema, json{{"steps", 3}}), std::nullopt);
  EXPECT_EQ(
      validate_against_schema(schema, ToolResult::error(ErrorCode::kNotFound, "x").structured),
      std::nullopt);
  // Neither the success fields nor the error: refused by the schema.
  EXPECT_NE(validate_against_schema(schema, json::object()), std::nullopt);
  EXPECT_NE(validate_against_schema(schema, json{{"error", {{"code", "nope"}}}}), std::nullopt);
  EXPECT_EQ(registry.list()["tools"][0]["outputSchema"], schema);
}

TEST(ToolRegistryAdd, RefusesAnOutputSchemaThatDeclaresErrorItselfOrAnUnknownKeyword) {
  ToolRegistry registry;
  Tool own = make_tool("own");
  own.output_schema = {{"type", "object"}, {"properties", {{"error", {{"type", "string"}}}}}};
  EXPECT_THAT(refusal(registry, own), HasSubstr("shared error shape"));
  Tool odd = make_tool("odd");
  odd.output_schema = {{"type", "object"},
                       {"properties", {{"n", {{"type", "integer"}, {"multipleOf", 2}}}}}};
  EXPECT_THAT(refusal(registry, odd), HasSubstr("multipleOf"));
}

// A call runs on a session's worker thread, where an escaping exception ends
// the process; a schema keyword of the wrong type must be refused at add() or
// reported as a result, never thrown.
TEST(ToolRegistryCall, MalformedSchemaKeywordIsRefusedOrReportedNeverThrown) {
  ToolRegistry registry;
  Tool tool = make_tool("odd");
  tool.input_schema =
      testing::flat_object_schema({{"n", {{"type", "integer"}, {"minimum", "zero"}}}});
  if (!registry.add(tool)) SUCCEED() << "refused at declaration";
  if (!registry.contains("odd")) return;
  CallContext context = CallContext::detached();
  json result;
  EXPECT_NO_THROW(result = registry.call("odd", json{{"n", 1}}, context));
  EXPECT_TRUE(result.is_object());
}

TEST(ToolRegistryRun, UnknownToolIsAnErrorResult) {
  ToolRegistry registry;
  CallContext context = CallContext::detached();
  ToolResult result = registry.run("nope", json::object(), context);
  EXPECT_TRUE(result.is_error);
  EXPECT_THAT(result.text, HasSubstr("unknown tool `nope`"));
}

TEST(ToCallResult, EmptyTextFallsBackToTheStructuredJson) {
  ToolResult result;
  result.structured = json{{"a", 1}};
  json out = to_call_result(result);
  EXPECT_EQ(out["content"][0]["text"], R"({"a":1})");
  EXPECT_EQ(out["structuredContent"], json({{"a", 1}}));
}

}  // namespace
}  // namespace kiln::mcp
