#include "kiln/mcp/schema_validator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kiln::mcp {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

// A tool input schema with one property `name` described by `property`.
json with_property(const std::string& name, json property) {
  return json{{"type", "object"}, {"properties", {{name, std::move(property)}}}};
}

// The validation message for {name: value}, or "" when it is valid.
std::string problem(const std::string& name, const json& property, const json& value) {
  auto error = validate_against_schema(with_property(name, property), json{{name, value}});
  return error.value_or("");
}

TEST(ValidateAgainstSchema, StringTypeAcceptsStringsOnly) {
  json schema = {{"type", "string"}};
  EXPECT_EQ(problem("s", schema, "x"), "");
  EXPECT_EQ(problem("s", schema, 3), "argument `s`: expected a string, got the integer 3");
  EXPECT_THAT(problem("s", schema, nullptr), HasSubstr("got null"));
}

// The value is cut to fit the message; a cut inside a character made the reply unwritable.
TEST(ValidateAgainstSchema, CutsAQuotedValueAtACharacterBoundary) {
  std::string accents;
  for (int i = 0; i < 40; ++i) accents += "\u00e9";  // 2 bytes each
  // Dumped: '"a' and the accents; 57 bytes would end inside the 28th accent, the cut keeps 27.
  const std::string message = problem("s", {{"type", "integer"}}, "a" + accents);
  EXPECT_EQ(message, "argument `s`: expected an integer, got the string \"a" +
                         accents.substr(0, 54) + "...");
  EXPECT_NO_THROW((void)json(message).dump());
}

TEST(ValidateAgainstSchema, IntegerTypeAcceptsWholeFloatsButNotFractions) {
  json schema = {{"type", "integer"}};
  EXPECT_EQ(problem("steps", schema, 3), "");
  EXPECT_EQ(problem("steps", schema, 3.0), "");
  EXPECT_EQ(problem("steps", schema, 3.5),
            "argument `steps`: expected an integer, got the number 3.5");
  EXPECT_EQ(problem("steps", schema, "x"),
            "argument `steps`: expected an integer, got the string \"x\"");
  EXPECT_THAT(problem("steps", schema, true), HasSubstr("got the boolean true"));
}

TEST(ValidateAgainstSchema, NumberTypeAcceptsIntegersAndFractions) {
  json schema = {{"type", "number"}};
  EXPECT_EQ(problem("atol", schema, 3), "");
  EXPECT_EQ(problem("atol", schema, 3.5), "");
  EXPECT_THAT(problem("atol", schema, "3.5"), HasSubstr("argument `atol`: expected a number"));
}

TEST(ValidateAgainstSchema, BooleanArrayAndObjectTypes) {
  EXPECT_EQ(problem("b", {{"type", "boolean"}}, false), "");
  EXPECT_THAT(problem("b", {{"type", "boolean"}}, 0), HasSubstr("expected a boolean"));
  EXPECT_EQ(problem("a", {{"type", "array"}}, json::array()), "");
  EXPECT_THAT(problem("a", {{"type", "array"}}, json::object()),
              HasSubstr("expected an array, got an object"));
  EXPECT_THAT(problem("o", {{"type", "object"}}, json::array()),
              HasSubstr("expected an object, got an array"));
}

TEST(ValidateAgainstSchema, TypeListAcceptsAnyListedType) {
  json schema = {{"type", {"string", "null"}}};
  EXPECT_EQ(problem("x", schema, "a"), "");
  EXPECT_EQ(problem("x", schema, nullptr), "");
  EXPECT_THAT(problem("x", schema, 1), HasSubstr("expected a string or null"));
}

TEST(ValidateAgainstSchema, EnumAcceptsListedValuesOnly) {
  json schema = {{"type", "string"}, {"enum", {"fp16", "bf16"}}};
  EXPECT_EQ(problem("dtype", schema, "bf16"), "");
  std::string error = problem("dtype", schema, "fp8");
  EXPECT_THAT(error, HasSubstr("argument `dtype`: must be one of"));
  EXPECT_THAT(error, HasSubstr("\"fp16\""));
  EXPECT_THAT(error, HasSubstr("got the string \"fp8\""));
}

TEST(ValidateAgainstSchema, ConstAcceptsOnlyThatValue) {
  json schema = {{"const", "v1"}};
  EXPECT_EQ(problem("version", schema, "v1"), "");
  EXPECT_THAT(problem("version", schema, "v2"), HasSubstr("argument `version`: must be \"v1\""));
}

TEST(ValidateAgainstSchema, MinimumAndMaximumAreInclusive) {
  json schema = {{"type", "integer"}, {"minimum", 1}, {"maximum", 10}};
  EXPECT_EQ(problem("steps", schema, 1), "");
  EXPECT_EQ(problem("steps", schema, 10), "");
  EXPECT_EQ(problem("steps", schema, 0), "argument `steps`: must be at least 1, got 0");
  EXPECT_EQ(problem("steps", schema, 11), "argument `steps`: must be at most 10, got 11");
}

TEST(ValidateAgainstSchema, ExclusiveBoundsRejectTheBoundItself) {
  json schema = {{"type", "number"}, {"exclusiveMinimum", 0}, {"exclusiveMaximum", 1}};
  EXPECT_EQ(problem("p", schema, 0.5), "");
  EXPECT_THAT(problem("p", schema, 0), HasSubstr("argument `p`: must be greater than 0"));
  EXPECT_THAT(problem("p", schema, 1), HasSubstr("argument `p`: must be less than 1"));
  EXPECT_THAT(problem("p", schema, -0.5), HasSubstr("greater than"));
}

TEST(ValidateAgainstSchema, MinLengthAndMaxLength) {
  json schema = {{"type", "string"}, {"minLength", 2}, {"maxLength", 4}};
  EXPECT_EQ(problem("q", schema, "ab"), "");
  EXPECT_EQ(problem("q", schema, "abcd"), "");
  EXPECT_EQ(problem("q", schema, "a"), "argument `q`: must be at least 2 characters long");
  EXPECT_EQ(problem("q", schema, "abcde"),
            "argument `q`: must be at most 4 characters long (got 5)");
}

// JSON Schema measures strings in characters (code points), not UTF-8 bytes.
TEST(ValidateAgainstSchema, LengthCountsCharactersNotBytes) {
  json schema = {{"type", "string"}, {"maxLength", 2}};
  EXPECT_EQ(problem("q", schema, "\xC3\xA9\xC3\xA9"), "");  // "éé": 2 characters, 4 bytes
}

TEST(ValidateAgainstSchema, PatternIsSearchedNotAnchored) {
  json schema = {{"type", "string"}, {"pattern", "[0-9]+"}};
  EXPECT_EQ(problem("n", schema, "abc123"), "");
  EXPECT_THAT(problem("n", schema, "abc"),
              HasSubstr("argument `n`: must match the pattern [0-9]+"));
  json anchored = {{"type", "string"}, {"pattern", "^[a-z_]+$"}};
  EXPECT_EQ(problem("n", anchored, "gemm_kernel"), "");
  EXPECT_THAT(problem("n", anchored, "fp16-gemm"), HasSubstr("must match the pattern"));
}

TEST(ValidateAgainstSchema, ItemsAreValidatedWithTheirIndexInThePath) {
  json schema = {{"type", "array"}, {"items", {{"type", "string"}}}};
  EXPECT_EQ(problem("files", schema, json{"a", "b"}), "");
  EXPECT_EQ(problem("files", schema, json{"a", 2}),
            "argument `files[1]`: expected a string, got the integer 2");
}

TEST(ValidateAgainstSchema, MinItemsAndMaxItems) {
  json schema = {{"type", "array"}, {"minItems", 1}, {"maxItems", 2}};
  EXPECT_EQ(problem("xs", schema, json{1}), "");
  EXPECT_EQ(problem("xs", schema, json{1, 2}), "");
  EXPECT_EQ(problem("xs", schema, json::array()), "argument `xs`: needs at least 1 items");
  EXPECT_EQ(problem("xs", schema, json{1, 2, 3}), "argument `xs`: allows at most 2 items (got 3)");
}

TEST(ValidateAgainstSchema, UniqueItemsRejectsRepeats) {
  json schema = {{"type", "array"}, {"uniqueItems", true}};
  EXPECT_EQ(problem("xs", schema, json{1, 2, 3}), "");
  EXPECT_EQ(problem("xs", schema, json{"a", "b", "a"}),
            "argument `xs`: items must be unique; \"a\" appears twice");
  EXPECT_EQ(problem("xs", json{{"type", "array"}, {"uniqueItems", false}}, json{1, 1}), "");
}

TEST(ValidateAgainstSchema, MissingRequiredArgumentIsNamedWithItsType) {
  json schema = {{"type", "object"},
                 {"properties", {{"steps", {{"type", "integer"}}}, {"name", {{"type", "string"}}}}},
                 {"required", {"steps"}}};
  EXPECT_EQ(validate_against_schema(schema, json{{"steps", 1}}), std::nullopt);
  EXPECT_EQ(validate_against_schema(schema, json{{"name", "x"}}).value_or(""),
            "missing required argument `steps` (an integer)");
}

TEST(ValidateAgainstSchema, AdditionalPropertiesFalseRejectsUnknownArgumentsAndListsKnownOnes) {
  json schema = {{"type", "object"},
                 {"properties", {{"name", {{"type", "string"}}}, {"limit", {{"type", "integer"}}}}},
                 {"additionalProperties", false}};
  std::string error = validate_against_schema(schema, json{{"nmae", "x"}}).value_or("");
  EXPECT_THAT(error, HasSubstr("unknown argument `nmae`"));
  EXPECT_THAT(error, HasSubstr("limit, name"));
}

TEST(ValidateAgainstSchema, AdditionalPropertiesAllowedByDefault) {
  json schema = {{"type", "object"}, {"properties", {{"name", {{"type", "string"}}}}}};
  EXPECT_EQ(validate_against_schema(schema, json{{"extra", 1}}), std::nullopt);
}

TEST(ValidateAgainstSchema, TopLevelTypeMismatchNamesTheArguments) {
  json schema = {{"type", "object"}};
  EXPECT_EQ(validate_against_schema(schema, json::array()).value_or(""),
            "arguments: expected an object, got an array");
}

TEST(ValidateAgainstSchema, EmptySchemaAcceptsEverything) {
  EXPECT_EQ(validate_against_schema(json::object(), json{{"anything", {1, 2}}}), std::nullopt);
  EXPECT_EQ(validate_against_schema(json(true), json("x")), std::nullopt);
}

TEST(CheckToolSchema, AcceptsAFlatObjectSchema) {
  json schema = {
      {"type", "object"},
      {"properties",
       {{"name", {{"type", "string"}, {"pattern", "^[a-z]+$"}, {"description", "d"}}},
        {"mode", {{"type", "string"}, {"enum", {"a", "b"}}}},
        {"ids", {{"type", "array"}, {"items", {{"type", "integer"}}}, {"uniqueItems", true}}},
        {"limit", {{"type", "integer"}, {"minimum", 1}, {"default", 10}}}}},
      {"required", {"name"}},
      {"additionalProperties", false}};
  EXPECT_EQ(check_tool_schema(schema), std::nullopt);
}

TEST(CheckToolSchema, RejectsNonObjectTopLevel) {
  EXPECT_TRUE(check_tool_schema(json{{"type", "array"}}).has_value());
  EXPECT_TRUE(check_tool_schema(json{{"properties", json::object()}}).has_value());
  EXPECT_TRUE(check_tool_schema(json::array()).has_value());
  EXPECT_TRUE(check_tool_schema(json(nullptr)).has_value());
  EXPECT_THAT(check_tool_schema(json("object")).value_or(""), HasSubstr("top level"));
}

TEST(CheckToolSchema, RejectsCompositionKeywords) {
  for (const char* keyword : {"anyOf", "oneOf", "allOf", "not"}) {
    json schema = with_property("x", json{{keyword, json::array({{{"type", "string"}}})}});
    schema["type"] = "object";
    EXPECT_THAT(check_tool_schema(schema).value_or(""), HasSubstr(std::string("`") + keyword + "`"))
        << keyword;
  }
  json top_level = {{"type", "object"}, {"anyOf", json::array()}};
  EXPECT_THAT(check_tool_schema(top_level).value_or(""), HasSubstr("`anyOf` is not allowed"));
}

TEST(CheckToolSchema, RejectsRef) {
  json schema = with_property("x", json{{"$ref", "#/definitions/x"}});
  EXPECT_THAT(check_tool_schema(schema).value_or(""), HasSubstr("`$ref` is not allowed"));
}

TEST(CheckToolSchema, RejectsUnknownKeywords) {
  json schema = with_property("x", json{{"type", "string"}, {"contentEncoding", "base64"}});
  EXPECT_THAT(check_tool_schema(schema).value_or(""),
              HasSubstr("unsupported schema keyword `contentEncoding`"));
  EXPECT_THAT(check_tool_schema(json{{"type", "object"}, {"patternProperties", json::object()}})
                  .value_or(""),
              HasSubstr("`patternProperties`"));
}

TEST(CheckToolSchema, RejectsAnInvalidPattern) {
  json schema = with_property("x", json{{"type", "string"}, {"pattern", "([a-z"}});
  EXPECT_THAT(check_tool_schema(schema).value_or(""), HasSubstr("not a valid regular expression"));
}

TEST(CheckToolSchema, RejectsDeeplyNestedObjects) {
  json inner = {{"type", "object"}, {"properties", {{"deep", {{"type", "string"}}}}}};
  json middle = {{"type", "object"}, {"properties", {{"inner", inner}}}};
  json schema = with_property("outer", middle);
  EXPECT_THAT(check_tool_schema(schema).value_or(""), HasSubstr("nested objects are not allowed"));
}

// tools/README.md: properties are primitive, enum or array typed; an object-valued
// property is already a nested object.
TEST(CheckToolSchema, RejectsAPropertyThatIsAnObjectWithProperties) {
  json schema = with_property(
      "options", json{{"type", "object"}, {"properties", {{"x", {{"type", "integer"}}}}}});
  EXPECT_THAT(check_tool_schema(schema).value_or(""), HasSubstr("nested objects are not allowed"));
}

TEST(CheckToolSchema, RejectsArrayItemsThatAreObjectsWithProperties) {
  json items = {{"type", "object"}, {"properties", {{"x", {{"type", "integer"}}}}}};
  json schema = with_property("list", json{{"type", "array"}, {"items", items}});
  EXPECT_THAT(check_tool_schema(schema).value_or(""), HasSubstr("nested objects are not allowed"));
}

// A keyword with a value of the wrong type must be refused at declaration;
// otherwise validate_against_schema throws json::type_error at call time.
TEST(CheckToolSchema, RejectsKeywordValuesOfTheWrongType) {
  json bad_minimum = with_property("n", json{{"type", "integer"}, {"minimum", "zero"}});
  std::optional<std::string> verdict;
  EXPECT_NO_THROW(verdict = check_tool_schema(bad_minimum));
  EXPECT_TRUE(verdict.has_value()) << "a string `minimum` was accepted";

  json bad_pattern = with_property("s", json{{"type", "string"}, {"pattern", 5}});
  verdict.reset();
  EXPECT_NO_THROW(verdict = check_tool_schema(bad_pattern));
  EXPECT_TRUE(verdict.has_value()) << "a numeric `pattern` was accepted";
}

TEST(CheckToolSchema, RejectsUnknownTypeNames) {
  json schema = with_property("n", json{{"type", "int"}});
  EXPECT_TRUE(check_tool_schema(schema).has_value())
      << "type \"int\" would reject every value at call time";
}

TEST(CheckToolSchema, TopLevelTypeListIsRefusedWithoutThrowing) {
  std::optional<std::string> verdict;
  EXPECT_NO_THROW(verdict = check_tool_schema(json{{"type", {"object", "null"}}}));
  EXPECT_TRUE(verdict.has_value());
}

TEST(ValidateAgainstSchema, AnyOfNeedsOneAlternative) {
  json schema = {{"anyOf", {{{"type", "number"}}, {{"type", "string"}, {"enum", {"inf", "nan"}}}}}};
  EXPECT_EQ(validate_against_schema(schema, 1.5), std::nullopt);
  EXPECT_EQ(validate_against_schema(schema, "inf"), std::nullopt);
  auto problem = validate_against_schema(schema, "big");
  ASSERT_TRUE(problem.has_value());
  EXPECT_THAT(*problem, HasSubstr("none of the 2 alternatives of `anyOf`"));
}

TEST(ValidateAgainstSchema, OneOfNeedsExactlyOneAlternative) {
  json schema = {{"oneOf", {{{"type", "integer"}}, {{"type", "number"}}}}};
  EXPECT_EQ(validate_against_schema(schema, 1.5), std::nullopt);
  auto both = validate_against_schema(schema, 2);
  ASSERT_TRUE(both.has_value());
  EXPECT_THAT(*both, HasSubstr("exactly one"));
}

TEST(ValidateAgainstSchema, AllOfNeedsEveryPart) {
  json schema = {{"allOf", {{{"required", {"a"}}}, {{"required", {"b"}}}}}};
  EXPECT_EQ(validate_against_schema(schema, json{{"a", 1}, {"b", 2}}), std::nullopt);
  EXPECT_TRUE(validate_against_schema(schema, json{{"a", 1}}).has_value());
}

TEST(ValidateAgainstSchema, AdditionalPropertiesMayBeASchema) {
  json counts = {{"type", "object"}, {"additionalProperties", {{"type", "integer"}}}};
  EXPECT_EQ(validate_against_schema(counts, json{{"alu", 3}, {"fp32", 4}}), std::nullopt);
  auto problem = validate_against_schema(counts, json{{"alu", "many"}});
  ASSERT_TRUE(problem.has_value());
  EXPECT_THAT(*problem, HasSubstr("alu"));
}

TEST(ValidateAgainstSchema, NestedObjectsAreCheckedAtEveryLevel) {
  json schema = {{"type", "object"},
                 {"properties",
                  {{"error",
                    {{"type", "object"},
                     {"properties", {{"code", {{"type", "string"}}}}},
                     {"required", {"code"}}}}}}};
  EXPECT_EQ(validate_against_schema(schema, json{{"error", {{"code", "x"}}}}), std::nullopt);
  auto problem = validate_against_schema(schema, json{{"error", json::object()}});
  ASSERT_TRUE(problem.has_value());
  EXPECT_THAT(*problem, HasSubstr("error.code"));
}

TEST(CheckOutputSchema, AcceptsNestingAndAlternativesButNotUnknownKeywords) {
  json nested = {
      {"type", "object"},
      {"properties",
       {{"rows",
         {{"type", "array"},
          {"items",
           {{"type", "object"}, {"properties", {{"v", {{"anyOf", {{{"type", "number"}}}}}}}}}}}}}},
      {"anyOf", {{{"required", {"rows"}}}, {{"required", {"error"}}}}}};
  EXPECT_EQ(check_output_schema(nested), std::nullopt);
  json odd = {{"type", "object"}, {"properties", {{"n", {{"multipleOf", 2}}}}}};
  auto problem = check_output_schema(odd);
  ASSERT_TRUE(problem.has_value());
  EXPECT_THAT(*problem, HasSubstr("multipleOf"));
  EXPECT_TRUE(check_output_schema(json{{"type", "array"}}).has_value());
  EXPECT_TRUE(check_output_schema(json{{"type", "object"}, {"anyOf", json::array()}}).has_value());
}

}  // namespace
}  // namespace kiln::mcp
