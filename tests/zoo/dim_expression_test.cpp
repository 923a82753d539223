// Checks the dim expression evaluator (tests/zoo/support/dim_expression.cpp).
#include "dim_expression.h"

#include <gtest/gtest.h>

namespace kiln::zoo {
namespace {

const std::map<std::string, int64_t> kDims = {{"M", 4096}, {"N", 2048}, {"K", 512}, {"G", 8}};

int64_t eval(const std::string& text) {
  auto value = evaluate_dim_expression(text, kDims);
  EXPECT_TRUE(value.ok()) << text << ": " << value.error().message;
  return value.ok() ? *value : -1;
}

std::string error_of(const std::string& text) {
  auto value = evaluate_dim_expression(text, kDims);
  EXPECT_FALSE(value.ok()) << text;
  return value.ok() ? "" : value.error().message;
}

TEST(DimExpression, EvaluatesArithmeticWithPrecedence) {
  EXPECT_EQ(eval("G+1"), 9);
  EXPECT_EQ(eval(" G + 1 "), 9);
  EXPECT_EQ(eval("2*M*N*K"), int64_t{2} * 4096 * 2048 * 512);
  EXPECT_EQ(eval("2*(M*K+N*K+M*N)"), 2 * (4096 * 512 + 2048 * 512 + int64_t{4096} * 2048));
  EXPECT_EQ(eval("1 + 2 * 3"), 7);
  EXPECT_EQ(eval("(M + 127) / 128"), 32);
  EXPECT_EQ(eval("-7 / 2"), -3);  // truncates toward zero
  EXPECT_EQ(eval("7 % 4"), 3);
  EXPECT_EQ(eval("--3"), 3);
  EXPECT_EQ(eval("1"), 1);
}

TEST(DimExpression, RejectsErrorsWithAReason) {
  EXPECT_NE(error_of("M*Q").find("'Q'"), std::string::npos);
  EXPECT_NE(error_of("M/(N-N)").find("zero"), std::string::npos);
  EXPECT_NE(error_of("M*M*M*M*M*M").find("overflow"), std::string::npos);
  EXPECT_NE(error_of("(M+1").find("')'"), std::string::npos);
  EXPECT_NE(error_of("M+").find("operand"), std::string::npos);
  EXPECT_NE(error_of("M N").find("unexpected"), std::string::npos);
  EXPECT_NE(error_of("").find("operand"), std::string::npos);
  EXPECT_NE(error_of("99999999999999999999").find("too large"), std::string::npos);
}

}  // namespace
}  // namespace kiln::zoo
