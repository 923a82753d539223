// A small recursive-descent evaluator for shape and size expressions:
//
//   expr    := term (('+' | '-') term)*
//   term    := unary (('*' | '/' | '%') unary)*
//   unary   := ('-' | '+') unary | primary
//   primary := INTEGER | NAME | '(' expr ')'
//
// Arithmetic is int64 with C semantics (division truncates toward zero); overflow
// and division by zero are errors, never wrapped or undefined.
#include "expression.h"

#include <cctype>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>

#include "kiln/tasks/task.h"

namespace kiln::tasks {
namespace {

constexpr int kMaxDepth = 100;  // nesting limit, so hostile input cannot overflow the stack

struct ParseFailure {
  std::string message;
};

class Parser {
 public:
  // With `dims` null the parser only checks syntax and records names.
  Parser(const std::string& text, const std::map<std::string, int64_t>* dims)
      : text_(text), dims_(dims) {}

  int64_t parse() {
    skip_space();
    if (pos_ == text_.size()) fail("is empty; write an integer expression such as 2*M*N*K");
    int64_t value = expr(0);
    skip_space();
    if (pos_ != text_.size()) {
      fail("has unexpected '" + std::string(1, text_[pos_]) + "' at position " +
           std::to_string(pos_) + "; remove it or add the missing operator");
    }
    return value;
  }

  const std::vector<std::string>& names() const { return names_; }

 private:
  int64_t expr(int depth) {
    int64_t value = term(depth);
    for (;;) {
      skip_space();
      if (peek('+')) {
        ++pos_;
        value = add(value, term(depth));
      } else if (peek('-')) {
        ++pos_;
        value = subtract(value, term(depth));
      } else {
        return value;
      }
    }
  }

  int64_t term(int depth) {
    int64_t value = unary(depth);
    for (;;) {
      skip_space();
      if (peek('*')) {
        ++pos_;
        value = multiply(value, unary(depth));
      } else if (peek('/') || peek('%')) {
        const char op = text_[pos_];
        const size_t op_pos = pos_;
        ++pos_;
        value = divide(value, unary(depth), op, op_pos);
      } else {
        return value;
      }
    }
  }

  int64_t unary(int depth) {
    if (depth > kMaxDepth) fail("nests deeper than " + std::to_string(kMaxDepth) + " levels");
    skip_space();
    if (peek('-')) {
      ++pos_;
      return subtract(0, unary(depth + 1));
    }
    if (peek('+')) {
      ++pos_;
      return unary(depth + 1);
    }
    return primary(depth);
  }

  int64_t primary(int depth) {
    skip_space();
    if (pos_ == text_.size()) fail("ends early; an operand is missing at the end");
    const char c = text_[pos_];
    if (c == '(') {
      const size_t open = pos_;
      ++pos_;
      const int64_t value = expr(depth + 1);
      skip_space();
      if (!peek(')')) {
        fail("has '(' at position " + std::to_string(open) + " without a matching ')'");
      }
      ++pos_;
      return value;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) return literal();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return name();
    fail("has unexpected '" + std::string(1, c) + "' at position " + std::to_string(pos_) +
         "; expected an integer, a dim name or '('");
  }

  int64_t literal() {
    const size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      const int64_t digit = text_[pos_] - '0';
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) {
        fail("has the literal starting at position " + std::to_string(start) +
             ", which does not fit in a signed 64-bit integer");
      }
      value = value * 10 + digit;
      ++pos_;
    }
    return value;
  }

  int64_t name() {
    const size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    const std::string id = text_.substr(start, pos_ - start);
    bool seen = false;
    for (const auto& n : names_) seen = seen || n == id;
    if (!seen) names_.push_back(id);
    if (dims_ == nullptr) return 0;
    const auto it = dims_->find(id);
    if (it == dims_->end()) {
      std::string known;
      for (const auto& [dim, value] : *dims_) known += (known.empty() ? "" : ", ") + dim;
      fail("names '" + id + "', which is not a dim" +
           (known.empty() ? std::string("; no dims are defined")
                          : "; use one of the dims: " + known));
    }
    return it->second;
  }

  int64_t add(int64_t a, int64_t b) {
    int64_t r = 0;
    if (dims_ != nullptr && __builtin_add_overflow(a, b, &r)) overflow();
    return r;
  }
  int64_t subtract(int64_t a, int64_t b) {
    int64_t r = 0;
    if (dims_ != nullptr && __builtin_sub_overflow(a, b, &r)) overflow();
    return r;
  }
  int64_t multiply(int64_t a, int64_t b) {
    int64_t r = 0;
    if (dims_ != nullptr && __builtin_mul_overflow(a, b, &r)) overflow();
    return r;
  }
  int64_t divide(int64_t a, int64_t b, char op, size_t op_pos) {
    if (dims_ == nullptr) return 0;
    if (b == 0) {
      fail("divides by zero at the '" + std::string(1, op) + "' at position " +
           std::to_string(op_pos));
    }
    if (a == std::numeric_limits<int64_t>::min() && b == -1) overflow();
    return op == '/' ? a / b : a % b;
  }

  [[noreturn]] void overflow() {
    fail("overflows a signed 64-bit integer with these dims; use smaller dims");
  }
  [[noreturn]] void fail(const std::string& problem) {
    throw ParseFailure{"expression '" + text_ + "' " + problem};
  }

  bool peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  const std::string& text_;
  const std::map<std::string, int64_t>* dims_;
  size_t pos_ = 0;
  std::vector<std::string> names_;
};

}  // namespace

Result<int64_t> evaluate(const std::string& expression,
                         const std::map<std::string, int64_t>& dims) {
  try {
    Parser parser(expression, &dims);
    return parser.parse();
  } catch (const ParseFailure& failure) {
    return make_error(failure.message);
  }
}

Result<std::vector<std::string>> expression_names(const std::string& expression) {
  try {
    Parser parser(expression, nullptr);
    parser.parse();
    return parser.names();
  } catch (const ParseFailure& failure) {
    return make_error(failure.message);
  }
}

}  // namespace kiln::tasks
