#include "kiln/ptx/lexer.h"

#include <string>

namespace kiln::ptx {
namespace {

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$';
}
bool is_word_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c == '%';
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_punct(char c) {
  switch (c) {
    case '{':
    case '}':
    case '[':
    case ']':
    case '(':
    case ')':
    case ',':
    case ';':
    case ':':
    case '+':
    case '-':
    case '!':
    case '|':
    case '@':
    case '<':
    case '>':
    case '=':
    case '*':
    case '/':
    case '~':
    case '&':
    case '^':
    case '?':
      return true;
    default:
      return false;
  }
}

std::string describe_byte(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("'") + c + "'";
  static const char* kHex = "0123456789ABCDEF";
  return std::string("byte 0x") + kHex[u >> 4] + kHex[u & 15];
}

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  LexOutput run() {
    LexOutput out;
    out.tokens.reserve(text_.size() / 4 + 1);
    while (true) {
      if (!skip_space_and_comments(out)) break;
      if (pos_ >= text_.size()) break;
      Token token;
      if (!next(token, out)) break;
      out.tokens.push_back(token);
    }
    Token end;
    end.kind = TokenKind::End;
    end.location = here();
    end.offset = static_cast<uint32_t>(pos_);
    out.tokens.push_back(end);
    return out;
  }

 private:
  SourceLocation here() const { return {line_, static_cast<uint32_t>(pos_ - line_start_ + 1)}; }
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      line_start_ = pos_ + 1;
    }
    ++pos_;
  }
  void fail(LexOutput& out, SourceLocation at, std::string message) {
    out.error = Diagnostic{Severity::Error, at, std::move(message)};
  }

  // False when an unterminated block comment ends the input (error set).
  bool skip_space_and_comments(LexOutput& out) {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
        advance();
      } else if (c == '/' && peek(1) == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (c == '/' && peek(1) == '*') {
        const SourceLocation start = here();
        pos_ += 2;
        while (pos_ < text_.size() && !(text_[pos_] == '*' && peek(1) == '/')) advance();
        if (pos_ >= text_.size()) {
          fail(out, start, "unterminated /* comment: add the closing */");
          return false;
        }
        pos_ += 2;
      } else {
        break;
      }
    }
    return true;
  }

  // Word characters, then any number of ".word" and "::word" continuations.
  void scan_word() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (is_word_char(c) || (c == '.' && is_word_char(peek(1)))) {
        ++pos_;
      } else if (c == ':' && peek(1) == ':' && is_word_char(peek(2))) {
        pos_ += 2;
      } else {
        break;
      }
    }
  }

  bool next(Token& token, LexOutput& out) {
    const size_t start = pos_;
    token.location = here();
    token.offset = static_cast<uint32_t>(start);
    const char c = text_[pos_];
    if (is_word_start(c)) {
      ++pos_;
      scan_word();
      token.kind = TokenKind::Identifier;
    } else if (c == '.' && is_word_char(peek(1))) {
      ++pos_;
      scan_word();
      token.kind = TokenKind::Directive;
    } else if (is_digit(c)) {
      if (!scan_number(token, out)) return false;
    } else if (c == '"') {
      ++pos_;
      while (pos_ < text_.size() && text_[pos_] != '"' && text_[pos_] != '\n') {
        if (text_[pos_] == '\\' && pos_ + 1 < text_.size() && text_[pos_ + 1] != '\n') ++pos_;
        ++pos_;
      }
      if (pos_ >= text_.size() || text_[pos_] != '"') {
        fail(out, token.location, "unterminated string: add the closing '\"' on the same line");
        return false;
      }
      ++pos_;
      token.kind = TokenKind::String;
    } else if (is_punct(c)) {
      ++pos_;
      token.kind = TokenKind::Punct;
    } else {
      fail(out, token.location, "unexpected " + describe_byte(c) + " in PTX text");
      return false;
    }
    token.text = text_.substr(start, pos_ - start);
    return true;
  }

  bool scan_number(Token& token, LexOutput& out) {
    const size_t start = pos_;
    token.kind = TokenKind::Integer;
    const char second = peek(1);
    if (text_[pos_] == '0' && (second == 'f' || second == 'F' || second == 'd' || second == 'D')) {
      token.kind = TokenKind::Float;
      pos_ += 2;
      while (pos_ < text_.size() && is_word_char(text_[pos_])) ++pos_;
    } else {
      while (pos_ < text_.size() && is_word_char(text_[pos_])) {
        const char c = text_[pos_];
        // A decimal exponent sign: 1e-5, 2.5E+3 (but not 0x1e-5, which is a subtraction).
        if ((c == 'e' || c == 'E') && (peek(1) == '+' || peek(1) == '-') && is_digit(peek(2)) &&
            !(text_[start] == '0' && pos_ > start + 1 &&
              (text_[start + 1] == 'x' || text_[start + 1] == 'X'))) {
          token.kind = TokenKind::Float;
          pos_ += 2;
          continue;
        }
        ++pos_;
      }
      if (pos_ < text_.size() && text_[pos_] == '.' && is_digit(peek(1))) {
        token.kind = TokenKind::Float;
        ++pos_;
        while (pos_ < text_.size()) {
          const char c = text_[pos_];
          if ((c == 'e' || c == 'E') && (peek(1) == '+' || peek(1) == '-')) {
            pos_ += 2;
          } else if (is_word_char(c)) {
            ++pos_;
          } else {
            break;
          }
        }
      } else if (pos_ < text_.size() && text_[pos_] == '.' && !is_word_char(peek(1))) {
        // "1." is a float too.
        token.kind = TokenKind::Float;
        ++pos_;
      }
    }
    (void)out;
    return true;
  }

  std::string_view text_;
  size_t pos_ = 0;
  uint32_t line_ = 1;
  size_t line_start_ = 0;
};

}  // namespace

std::string_view token_kind_name(TokenKind kind) {
  switch (kind) {
    case TokenKind::Identifier:
      return "identifier";
    case TokenKind::Directive:
      return "directive";
    case TokenKind::Integer:
      return "integer";
    case TokenKind::Float:
      return "float";
    case TokenKind::String:
      return "string";
    case TokenKind::Punct:
      return "punctuation";
    case TokenKind::End:
      return "end of input";
  }
  return "token";
}

LexOutput tokenize(std::string_view text) { return Lexer(text).run(); }

}  // namespace kiln::ptx
