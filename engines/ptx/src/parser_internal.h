// Shared by the parser's source files: the token cursor, literal parsing, and the entry points
// for declarations and function bodies. Not part of the library's interface.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ptx/diagnostic.h"
#include "kiln/ptx/function.h"
#include "kiln/ptx/registers.h"
#include "kiln/ptx/token.h"
#include "kiln/ptx/types.h"
#include "kiln/ptx/variable.h"

namespace kiln::ptx::detail {

// Thrown inside the parser and caught at parse_ptx; never crosses the library boundary.
struct ParseError {
  Diagnostic diagnostic;
};

class TokenCursor {
 public:
  TokenCursor(const std::vector<Token>& tokens, std::string_view text,
              std::vector<Diagnostic>& warnings)
      : tokens_(tokens), text_(text), warnings_(warnings) {}

  const Token& peek(size_t ahead = 0) const {
    const size_t i = pos_ + ahead;
    return i < tokens_.size() ? tokens_[i] : tokens_.back();
  }
  const Token& next() {
    const Token& t = peek();
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool at_end() const { return peek().kind == TokenKind::End; }
  size_t position() const { return pos_; }
  const Token& at(size_t index) const {
    return index < tokens_.size() ? tokens_[index] : tokens_.back();
  }
  std::string_view text() const { return text_; }

  bool accept_punct(char c) {
    if (!peek().is_punct(c)) return false;
    next();
    return true;
  }
  const Token& expect_punct(char c, std::string_view what);
  const Token& expect_identifier(std::string_view what);
  uint64_t expect_unsigned(std::string_view what);

  [[noreturn]] void fail(const Token& at, std::string message) const;
  [[noreturn]] void fail_expected(std::string_view expected) const;
  void warn(const Token& at, std::string message) {
    warnings_.push_back({Severity::Warning, at.location, std::move(message)});
  }

  // 'foo' for a token, or "end of input".
  static std::string describe(const Token& token);

 private:
  const std::vector<Token>& tokens_;
  std::string_view text_;
  std::vector<Diagnostic>& warnings_;
  size_t pos_ = 0;
};

// A numeric literal (the text of an Integer or Float token); nullopt with `error` set when the
// text is malformed or out of range.
std::optional<Number> parse_number(std::string_view text, std::string& error);

// ".v4.f32" -> {"v4", "f32"}; ".shared::cta" -> {"shared::cta"}.
std::vector<std::string_view> split_directive(std::string_view text);

// Declarations, positioned at the first qualifier. The terminator (';', ',' or ')') is left.
Variable parse_variable(TokenCursor& cursor);
// Positioned at .reg; consumes through ';'.
RegisterDecl parse_register_decl(TokenCursor& cursor);

// Positioned just after the body's '{'; consumes through the matching '}'.
void parse_body(TokenCursor& cursor, Function& function, const Token& open_brace);

// Consumes an unknown directive up to and including ';' (or a balanced { } block) at depth 0;
// stops before a '}' that would close an enclosing block. Returns its text re-spaced.
std::string skip_directive(TokenCursor& cursor);

// Joins tokens [first, last) with PTX-friendly spacing.
std::string join_tokens(const TokenCursor& cursor, size_t first, size_t last);

}  // namespace kiln::ptx::detail
