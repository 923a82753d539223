#include <gtest/gtest.h>

#include <bit>

#include "parser_internal.h"

namespace kiln::ptx::detail {
namespace {

Number ok(std::string_view text) {
  std::string error;
  std::optional<Number> n = parse_number(text, error);
  EXPECT_TRUE(n.has_value()) << text << ": " << error;
  return n.value_or(Number{});
}

std::string bad(std::string_view text) {
  std::string error;
  EXPECT_FALSE(parse_number(text, error).has_value()) << text;
  return error;
}

TEST(NumberLiteral, ReadsIntegersInEveryBase) {
  EXPECT_EQ(ok("42").as_int(), 42);
  EXPECT_EQ(ok("0x1F").bits, 31u);
  EXPECT_EQ(ok("0x1F").format, NumberFormat::Hex);
  EXPECT_EQ(ok("017").bits, 15u);
  EXPECT_EQ(ok("017").format, NumberFormat::Octal);
  EXPECT_EQ(ok("0b101").bits, 5u);
  EXPECT_EQ(ok("0").bits, 0u);
}

TEST(NumberLiteral, KeepsTheUnsignedSuffix) {
  Number n = ok("7U");
  EXPECT_EQ(n.bits, 7u);
  EXPECT_TRUE(n.unsigned_suffix);
  EXPECT_TRUE(ok("0xFFu").unsigned_suffix);
}

TEST(NumberLiteral, MarksDecimalsAboveInt64AsUnsigned) {
  Number n = ok("18446744073709551615");
  EXPECT_EQ(n.bits, UINT64_MAX);
  EXPECT_EQ(n.format, NumberFormat::DecimalUnsigned);
}

TEST(NumberLiteral, ReadsHexFloatsAsExactBits) {
  Number f = ok("0f3F800000");
  EXPECT_EQ(f.format, NumberFormat::HexF32);
  EXPECT_EQ(f.bits, 0x3F800000u);
  EXPECT_DOUBLE_EQ(f.as_double(), 1.0);
  Number d = ok("0d400921FB54442D11");
  EXPECT_EQ(d.format, NumberFormat::HexF64);
  EXPECT_DOUBLE_EQ(d.as_double(), 3.14159265358979);
}

TEST(NumberLiteral, ReadsDecimalFloats) {
  EXPECT_DOUBLE_EQ(ok("1.5").as_double(), 1.5);
  EXPECT_DOUBLE_EQ(ok("2e-3").as_double(), 2e-3);
  EXPECT_DOUBLE_EQ(ok("1e10").as_double(), 1e10);
  EXPECT_EQ(ok("1.5").format, NumberFormat::DecimalFloat);
}

TEST(NumberLiteral, RejectsMalformedLiteralsAndSaysWhy) {
  EXPECT_NE(bad("0f3F80").find("exactly 8 hex digits"), std::string::npos);
  EXPECT_NE(bad("0d12").find("exactly 16 hex digits"), std::string::npos);
  EXPECT_NE(bad("12abc").find("not a base-10 digit"), std::string::npos);
  EXPECT_NE(bad("099").find("not a base-8 digit"), std::string::npos);
  EXPECT_NE(bad("0x10000000000000000").find("64 bits"), std::string::npos);
  EXPECT_NE(bad("1.5.5").find("malformed number"), std::string::npos);
}

TEST(NumberLiteral, SplitsDirectivesAtDotsButNotAtDoubleColons) {
  EXPECT_EQ(split_directive(".v4.f32"), (std::vector<std::string_view>{"v4", "f32"}));
  EXPECT_EQ(split_directive(".shared::cluster"),
            (std::vector<std::string_view>{"shared::cluster"}));
}

}  // namespace
}  // namespace kiln::ptx::detail
