#include "dim_expression.h"

#include <cctype>

namespace kiln::zoo {
namespace {

struct Failure {
  std::string message;
};

// expr := term (('+'|'-') term)*; term := unary (('*'|'/'|'%') unary)*;
// unary := '-' unary | '+' unary | primary; primary := INTEGER | NAME | '(' expr ')'
class Parser {
 public:
  Parser(const std::string& text, const std::map<std::string, int64_t>& dims)
      : text_(text), dims_(dims) {}

  int64_t parse() {
    const int64_t value = expr(0);
    skip_space();
    if (pos_ != text_.size())
      fail("unexpected '" + std::string(1, text_[pos_]) + "' at position " + std::to_string(pos_));
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& message) { throw Failure{message}; }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool take(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  int64_t expr(int depth) {
    int64_t value = term(depth);
    for (;;) {
      if (take('+')) {
        if (__builtin_add_overflow(value, term(depth), &value)) fail("overflows int64");
      } else if (take('-')) {
        if (__builtin_sub_overflow(value, term(depth), &value)) fail("overflows int64");
      } else {
        return value;
      }
    }
  }

  int64_t term(int depth) {
    int64_t value = unary(depth);
    for (;;) {
      if (take('*')) {
        if (__builtin_mul_overflow(value, unary(depth), &value)) fail("overflows int64");
      } else if (take('/') || take('%')) {
        const char op = text_[pos_ - 1];
        const int64_t divisor = unary(depth);
        if (divisor == 0) fail("divides by zero");
        if (value == INT64_MIN && divisor == -1) fail("overflows int64");
        value = op == '/' ? value / divisor : value % divisor;
      } else {
        return value;
      }
    }
  }

  int64_t unary(int depth) {
    if (depth > 100) fail("nests too deeply");
    if (take('-')) {
      int64_t value = 0;
      if (__builtin_sub_overflow(int64_t{0}, unary(depth + 1), &value)) fail("overflows int64");
      return value;
    }
    if (take('+')) return unary(depth + 1);
    return primary(depth);
  }

  int64_t primary(int depth) {
    skip_space();
    if (pos_ == text_.size()) fail("ends where an operand is expected");
    if (take('(')) {
      const int64_t value = expr(depth + 1);
      if (!take(')')) fail("misses a ')'");
      return value;
    }
    const char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t value = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        if (__builtin_mul_overflow(value, 10, &value) ||
            __builtin_add_overflow(value, text_[pos_] - '0', &value)) {
          fail("has a literal too large for int64");
        }
        ++pos_;
      }
      return value;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
        ++pos_;
      const std::string name = text_.substr(start, pos_ - start);
      const auto it = dims_.find(name);
      if (it == dims_.end()) {
        std::string known;
        for (const auto& [dim, value] : dims_) known += (known.empty() ? "" : ", ") + dim;
        fail("names '" + name + "', which this shape does not give (it has: " + known + ")");
      }
      return it->second;
    }
    fail("has unexpected '" + std::string(1, c) + "' at position " + std::to_string(pos_));
  }

  const std::string& text_;
  const std::map<std::string, int64_t>& dims_;
  size_t pos_ = 0;
};

}  // namespace

Result<int64_t> evaluate_dim_expression(const std::string& expression,
                                        const std::map<std::string, int64_t>& dims) {
  try {
    return Parser(expression, dims).parse();
  } catch (const Failure& failure) {
    return make_error("'" + expression + "' " + failure.message);
  }
}

}  // namespace kiln::zoo
