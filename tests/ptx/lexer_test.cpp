#include "kiln/ptx/lexer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kiln::ptx {
namespace {

std::vector<std::string> texts(const LexOutput& out) {
  std::vector<std::string> t;
  for (const Token& token : out.tokens) {
    if (token.kind != TokenKind::End) t.emplace_back(token.text);
  }
  return t;
}

TEST(Lexer, SplitsAnInstructionIntoOpcodeOperandsAndPunctuation) {
  LexOutput out = tokenize("@!%p1 ld.global.nc.v4.f32 {%f1, %f2}, [%rd1+16];");
  ASSERT_FALSE(out.error);
  EXPECT_EQ(texts(out),
            (std::vector<std::string>{"@", "!", "%p1", "ld.global.nc.v4.f32", "{", "%f1", ",",
                                      "%f2", "}", ",", "[", "%rd1", "+", "16", "]", ";"}));
  EXPECT_EQ(out.tokens[3].kind, TokenKind::Identifier);
  EXPECT_EQ(out.tokens.back().kind, TokenKind::End);
}

TEST(Lexer, KeepsDoubleColonModifiersInsideOneToken) {
  LexOutput out = tokenize(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1];");
  ASSERT_FALSE(out.error);
  EXPECT_EQ(out.tokens[0].text,
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes");
}

TEST(Lexer, ReadsDirectivesWithScopedSpaces) {
  LexOutput out = tokenize(".shared::cta .b32 .L2::128B");
  ASSERT_FALSE(out.error);
  EXPECT_EQ(texts(out), (std::vector<std::string>{".shared::cta", ".b32", ".L2::128B"}));
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(out.tokens[i].kind, TokenKind::Directive);
}

TEST(Lexer, ReadsSpecialRegistersWithComponents) {
  LexOutput out = tokenize("mov.u32 %r1, %tid.x;");
  ASSERT_FALSE(out.error);
  EXPECT_EQ(out.tokens[3].text, "%tid.x");
}

TEST(Lexer, SeparatesALabelFromItsColon) {
  LexOutput out = tokenize("$L__BB0_2:\nWAIT:");
  ASSERT_FALSE(out.error);
  EXPECT_EQ(texts(out), (std::vector<std::string>{"$L__BB0_2", ":", "WAIT", ":"}));
}

TEST(Lexer, ReadsRegisterRanges) {
  LexOutput out = tokenize(".reg .b32 %r<57>;");
  ASSERT_FALSE(out.error);
  EXPECT_EQ(texts(out), (std::vector<std::string>{".reg", ".b32", "%r", "<", "57", ">", ";"}));
}

TEST(Lexer, ClassifiesNumbers) {
  LexOutput out = tokenize("42 0x1F 0f3F800000 0d3FF0000000000000 1.5 2e-3 9.0 7U");
  ASSERT_FALSE(out.error);
  const std::vector<TokenKind> kinds = {TokenKind::Integer, TokenKind::Integer, TokenKind::Float,
                                        TokenKind::Float,   TokenKind::Float,   TokenKind::Float,
                                        TokenKind::Float,   TokenKind::Integer};
  ASSERT_EQ(out.tokens.size(), kinds.size() + 1);
  for (size_t i = 0; i < kinds.size(); ++i) EXPECT_EQ(out.tokens[i].kind, kinds[i]) << i;
  EXPECT_EQ(out.tokens[5].text, "2e-3");
}

TEST(Lexer, DropsCommentsAndTracksLinesAndColumns) {
  LexOutput out =
      tokenize("// header\n\t/* block\n comment */ add.s32 %r1, %r2, 1; // tail\n  ret;");
  ASSERT_FALSE(out.error);
  EXPECT_EQ(out.tokens[0].text, "add.s32");
  EXPECT_EQ(out.tokens[0].location.line, 3u);
  EXPECT_EQ(out.tokens[0].location.column, 13u);
  const Token& ret = out.tokens[out.tokens.size() - 3];
  EXPECT_EQ(ret.text, "ret");
  EXPECT_EQ(ret.location.line, 4u);
  EXPECT_EQ(ret.location.column, 3u);
}

TEST(Lexer, ReadsStringsWithEscapes) {
  LexOutput out = tokenize(R"(.file 1 "a \"quoted\" path.cu")");
  ASSERT_FALSE(out.error);
  EXPECT_EQ(out.tokens[2].kind, TokenKind::String);
  EXPECT_EQ(out.tokens[2].text, R"("a \"quoted\" path.cu")");
}

TEST(Lexer, ReportsAnUnterminatedStringWithItsPosition) {
  LexOutput out = tokenize(".pragma \"nounroll;\nret;");
  ASSERT_TRUE(out.error);
  EXPECT_EQ(out.error->location.line, 1u);
  EXPECT_EQ(out.error->location.column, 9u);
  EXPECT_NE(out.error->message.find("unterminated string"), std::string::npos);
  EXPECT_EQ(out.tokens.back().kind, TokenKind::End);
}

TEST(Lexer, ReportsAnUnterminatedBlockComment) {
  LexOutput out = tokenize("ret;\n  /* never closed");
  ASSERT_TRUE(out.error);
  EXPECT_EQ(out.error->location.line, 2u);
  EXPECT_EQ(out.error->location.column, 3u);
}

TEST(Lexer, RejectsBytesPtxCannotContain) {
  LexOutput out = tokenize("add.s32 %r1, %r2, 1;\nmov.u32 %r1, \x01;");
  ASSERT_TRUE(out.error);
  EXPECT_EQ(out.error->location.line, 2u);
  EXPECT_EQ(out.error->location.column, 14u);
  EXPECT_NE(out.error->message.find("byte 0x01"), std::string::npos);
  // The tokens before the bad byte are still there, then End.
  EXPECT_EQ(out.tokens.back().kind, TokenKind::End);
  EXPECT_EQ(out.tokens[0].text, "add.s32");
}

TEST(Lexer, NamesTokenKinds) {
  EXPECT_EQ(token_kind_name(TokenKind::Directive), "directive");
  EXPECT_EQ(token_kind_name(TokenKind::End), "end of input");
}

}  // namespace
}  // namespace kiln::ptx
