#include "expression.h"  // tasks/src: internal to kiln_tasks

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "kiln/tasks/task.h"

namespace kiln::tasks {
namespace {

using ::testing::HasSubstr;

const std::map<std::string, int64_t> kDims = {{"M", 4096}, {"N", 28672}, {"K", 8192}, {"Z", 0}};

int64_t value_of(const std::string& expression) {
  auto result = evaluate(expression, kDims);
  EXPECT_TRUE(result) << expression << ": " << result.error().message;
  return result ? *result : -1;
}

std::string error_of(const std::string& expression) {
  auto result = evaluate(expression, kDims);
  return result ? "(evaluated to " + std::to_string(*result) + ")" : result.error().message;
}

TEST(Expression, EvaluatesLiteralsAndDims) {
  EXPECT_EQ(value_of("42"), 42);
  EXPECT_EQ(value_of("M"), 4096);
  EXPECT_EQ(value_of("  K  "), 8192);
}

TEST(Expression, MultipliesBeforeAdding) {
  EXPECT_EQ(value_of("1+2*3"), 7);
  EXPECT_EQ(value_of("2*3+1"), 7);
  EXPECT_EQ(value_of("(1+2)*3"), 9);
}

TEST(Expression, AssociatesLeftToRight) {
  EXPECT_EQ(value_of("10-3-2"), 5);
  EXPECT_EQ(value_of("100/10/5"), 2);
  EXPECT_EQ(value_of("17%10%4"), 3);
}

TEST(Expression, DividesTruncatingTowardZero) {
  EXPECT_EQ(value_of("7/2"), 3);
  EXPECT_EQ(value_of("-7/2"), -3);
  EXPECT_EQ(value_of("-7%3"), -1);
  EXPECT_EQ(value_of("(M+127)/128"), 32);
}

TEST(Expression, AppliesUnaryMinusAndPlus) {
  EXPECT_EQ(value_of("-M"), -4096);
  EXPECT_EQ(value_of("--3"), 3);
  EXPECT_EQ(value_of("+3"), 3);
  EXPECT_EQ(value_of("2*-3"), -6);
}

TEST(Expression, EvaluatesTheFp16GemmSizesAtTheLargestWorkload) {
  EXPECT_EQ(value_of("2*M*N*K"), int64_t{2} * 4096 * 28672 * 8192);
  EXPECT_EQ(value_of("2*(M*K+N*K+M*N)"),
            int64_t{2} * (4096LL * 8192 + 28672LL * 8192 + 4096LL * 28672));
}

TEST(Expression, RejectsUnknownName) {
  EXPECT_THAT(error_of("M*Q"),
              HasSubstr("names 'Q', which is not a dim; use one of the dims: K, M, N, Z"));
}

TEST(Expression, RejectsDivisionByZero) {
  EXPECT_THAT(error_of("M/Z"), HasSubstr("divides by zero at the '/' at position 1"));
  EXPECT_THAT(error_of("M%(K-K)"), HasSubstr("divides by zero at the '%'"));
}

TEST(Expression, RejectsOverflow) {
  EXPECT_THAT(error_of("M*N*K*M*N"), HasSubstr("overflows a signed 64-bit integer"));
  EXPECT_THAT(error_of("9223372036854775807+1"), HasSubstr("overflows"));
  EXPECT_THAT(error_of("-9223372036854775807-2"), HasSubstr("overflows"));
  EXPECT_THAT(error_of("(-9223372036854775807-1)/-1"), HasSubstr("overflows"));
}

TEST(Expression, AcceptsTheExtremesOfInt64) {
  EXPECT_EQ(value_of("9223372036854775807"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(value_of("-9223372036854775807-1"), std::numeric_limits<int64_t>::min());
}

TEST(Expression, RejectsLiteralTooLargeForInt64) {
  EXPECT_THAT(error_of("9223372036854775808"),
              HasSubstr("does not fit in a signed 64-bit integer"));
}

TEST(Expression, RejectsTrailingJunk) {
  EXPECT_THAT(error_of("M N"), HasSubstr("unexpected 'N' at position 2"));
  EXPECT_THAT(error_of("M)"), HasSubstr("unexpected ')' at position 1"));
  EXPECT_THAT(error_of("2.5"), HasSubstr("unexpected '.'"));
}

TEST(Expression, RejectsMissingOperands) {
  EXPECT_THAT(error_of(""), HasSubstr("is empty"));
  EXPECT_THAT(error_of("   "), HasSubstr("is empty"));
  EXPECT_THAT(error_of("M*"), HasSubstr("ends early"));
  EXPECT_THAT(error_of("*M"), HasSubstr("unexpected '*' at position 0"));
  EXPECT_THAT(error_of("()"), HasSubstr("unexpected ')'"));
}

TEST(Expression, RejectsUnbalancedParentheses) {
  EXPECT_THAT(error_of("(M+1"), HasSubstr("'(' at position 0 without a matching ')'"));
}

TEST(Expression, RejectsNestingDeeperThanTheLimit) {
  const std::string deep = std::string(1000, '(') + "1" + std::string(1000, ')');
  EXPECT_THAT(error_of(deep), HasSubstr("nests deeper than"));
  EXPECT_THAT(error_of(std::string(1000, '-') + "1"), HasSubstr("nests deeper than"));
}

TEST(Expression, ErrorQuotesTheExpression) {
  EXPECT_THAT(error_of("M +* 2"), HasSubstr("expression 'M +* 2'"));
}

TEST(ExpressionNames, ListsNamesInOrderOfFirstUse) {
  auto names = expression_names("2*(M*K + N*K + M*N)");
  ASSERT_TRUE(names);
  EXPECT_EQ(*names, (std::vector<std::string>{"M", "K", "N"}));
}

TEST(ExpressionNames, DoesNotEvaluate) {
  // Division by an expression that is zero when every dim is zero is still valid syntax.
  EXPECT_TRUE(expression_names("M/(N-N)"));
  EXPECT_TRUE(expression_names("Q*R"));
}

TEST(ExpressionNames, RejectsSyntaxErrors) {
  EXPECT_FALSE(expression_names("M+"));
  EXPECT_FALSE(expression_names("(M"));
  EXPECT_FALSE(expression_names("M$"));
}

}  // namespace
}  // namespace kiln::tasks
