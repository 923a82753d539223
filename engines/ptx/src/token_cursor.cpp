#include <string>

#include "parser_internal.h"

namespace kiln::ptx::detail {

std::string TokenCursor::describe(const Token& token) {
  if (token.kind == TokenKind::End) return "end of input";
  std::string out = "'";
  const size_t limit = 40;
  for (size_t i = 0; i < token.text.size() && i < limit; ++i) {
    const auto c = static_cast<unsigned char>(token.text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      static const char* kHex = "0123456789ABCDEF";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (token.text.size() > limit) out += "...";
  out += "'";
  return out;
}

void TokenCursor::fail(const Token& at, std::string message) const {
  throw ParseError{Diagnostic{Severity::Error, at.location, std::move(message)}};
}

void TokenCursor::fail_expected(std::string_view expected) const {
  fail(peek(), "expected " + std::string(expected) + ", found " + describe(peek()));
}

const Token& TokenCursor::expect_punct(char c, std::string_view what) {
  if (!peek().is_punct(c)) fail_expected(std::string("'") + c + "' " + std::string(what));
  return next();
}

const Token& TokenCursor::expect_identifier(std::string_view what) {
  if (peek().kind != TokenKind::Identifier) fail_expected(what);
  return next();
}

uint64_t TokenCursor::expect_unsigned(std::string_view what) {
  const Token& t = peek();
  if (t.kind != TokenKind::Integer) fail_expected(what);
  std::string error;
  std::optional<Number> n = parse_number(t.text, error);
  if (!n) fail(t, error);
  if (n->format == NumberFormat::Decimal && n->as_int() < 0)
    fail(t, "expected a non-negative integer");
  next();
  return n->bits;
}

std::string join_tokens(const TokenCursor& cursor, size_t first, size_t last) {
  std::string out;
  for (size_t i = first; i < last; ++i) {
    const Token& t = cursor.at(i);
    if (t.kind == TokenKind::End) break;
    if (!out.empty()) {
      const char prev = out.back();
      const bool tight_before =
          t.kind == TokenKind::Punct &&
          (t.text == "," || t.text == ")" || t.text == "]" || t.text == ";" || t.text == ":");
      const bool tight_after = prev == '(' || prev == '[';
      if (!tight_before && !tight_after) out += ' ';
    }
    out += t.text;
  }
  return out;
}

std::string skip_directive(TokenCursor& cursor) {
  const size_t first = cursor.position();
  int depth = 0;
  while (!cursor.at_end()) {
    const Token& t = cursor.peek();
    if (t.is_punct('{')) {
      ++depth;
    } else if (t.is_punct('}')) {
      if (depth == 0) break;  // closes an enclosing block: leave it
      --depth;
      if (depth == 0) {
        cursor.next();
        break;
      }
    } else if (t.is_punct(';') && depth == 0) {
      cursor.next();
      break;
    }
    cursor.next();
  }
  return join_tokens(cursor, first, cursor.position());
}

}  // namespace kiln::ptx::detail
