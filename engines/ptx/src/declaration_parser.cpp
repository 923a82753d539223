// Declarations: variables (module globals, body .shared/.local/.param, parameters) with their
// initializers, and .reg declarations.
#include <string>

#include "parser_internal.h"

namespace kiln::ptx::detail {
namespace {

constexpr int kMaxInitializerDepth = 32;

int64_t parse_signed_offset(TokenCursor& cursor) {
  // After a symbol: +8, -8, +-8.
  bool negative = false;
  bool any = false;
  while (cursor.peek().is_punct('+') || cursor.peek().is_punct('-')) {
    if (cursor.next().text == "-") negative = !negative;
    any = true;
  }
  if (!any) return 0;
  const uint64_t value = cursor.expect_unsigned("(an integer offset)");
  const auto magnitude = static_cast<int64_t>(value);
  return negative ? -magnitude : magnitude;
}

Initializer parse_initializer(TokenCursor& cursor, int depth) {
  if (depth > kMaxInitializerDepth) {
    cursor.fail(cursor.peek(), "initializer nested more than 32 levels deep");
  }
  Initializer init;
  const Token& t = cursor.peek();
  if (t.is_punct('{')) {
    cursor.next();
    init.kind = Initializer::Kind::List;
    if (!cursor.accept_punct('}')) {
      do {
        init.elements.push_back(parse_initializer(cursor, depth + 1));
      } while (cursor.accept_punct(','));
      cursor.expect_punct('}', "to close the initializer list");
    }
    return init;
  }
  if (t.kind == TokenKind::Identifier) {
    cursor.next();
    init.kind = Initializer::Kind::Symbol;
    if (t.text == "generic" && cursor.peek().is_punct('(')) {
      cursor.next();
      init.generic = true;
      init.symbol = std::string(cursor.expect_identifier("a symbol inside generic( )").text);
      cursor.expect_punct(')', "to close generic(");
    } else {
      init.symbol = std::string(t.text);
    }
    init.offset = parse_signed_offset(cursor);
    return init;
  }
  bool negative = false;
  while (cursor.peek().is_punct('-') || cursor.peek().is_punct('+')) {
    if (cursor.next().text == "-") negative = !negative;
  }
  const Token& number = cursor.peek();
  if (number.kind != TokenKind::Integer && number.kind != TokenKind::Float) {
    cursor.fail_expected("an initializer (a number, a symbol, generic(symbol) or a {...} list)");
  }
  std::string error;
  std::optional<Number> n = parse_number(number.text, error);
  if (!n) cursor.fail(number, error);
  cursor.next();
  init.kind = Initializer::Kind::Number;
  init.number = *n;
  if (negative) {
    if (n->format == NumberFormat::HexF32) {
      init.number.bits ^= 0x80000000u;
    } else if (n->is_float()) {
      init.number.bits ^= 0x8000000000000000ull;
    } else {
      init.number.bits = ~n->bits + 1;
      if (init.number.format == NumberFormat::DecimalUnsigned) {
        init.number.format = NumberFormat::Decimal;
      }
    }
  }
  return init;
}

}  // namespace

Variable parse_variable(TokenCursor& cursor) {
  Variable var;
  var.location = cursor.peek().location;
  bool after_ptr = false;
  while (cursor.peek().kind == TokenKind::Directive) {
    const Token& t = cursor.next();
    for (std::string_view word : split_directive(t.text)) {
      if (std::optional<Linkage> linkage = linkage_from_name(word)) {
        var.linkage = *linkage;
      } else if (std::optional<StateSpace> space = state_space_from_name(word)) {
        if (after_ptr) {
          var.pointer_space = *space;
        } else if (var.space == StateSpace::None) {
          var.space = *space;
        } else {
          cursor.fail(t, "a declaration names two state spaces ('." +
                             std::string(state_space_name(var.space)) + "' and '." +
                             std::string(word) + "')");
        }
      } else if (word == "align") {
        const uint64_t align = cursor.expect_unsigned("an alignment after .align");
        if (align == 0 || align > (1u << 20) || (align & (align - 1)) != 0) {
          cursor.fail(t, ".align takes a power of two, got " + std::to_string(align));
        }
        (after_ptr ? var.pointer_align : var.align) = static_cast<uint32_t>(align);
      } else if (word == "v2" || word == "v4" || word == "v8") {
        var.vector_width = static_cast<uint32_t>(word[1] - '0');
      } else if (word == "ptr") {
        var.is_pointer = true;
        after_ptr = true;
      } else if (word == "attribute") {
        cursor.expect_punct('(', "after .attribute");
        const size_t first = cursor.position();
        int depth = 1;
        while (true) {
          if (cursor.at_end()) cursor.fail_expected("')' to close .attribute(");
          const Token& a = cursor.peek();
          if (a.is_punct('(')) ++depth;
          if (a.is_punct(')') && --depth == 0) break;
          cursor.next();
        }
        var.attributes.push_back(".attribute(" + join_tokens(cursor, first, cursor.position()) +
                                 ")");
        cursor.next();
      } else if (std::optional<Type> type = type_from_name(word)) {
        var.type = *type;
      } else {
        cursor.fail(t, "unknown qualifier '." + std::string(word) +
                           "' in a declaration (expected a state space, .align N, .vN or a type)");
      }
    }
  }
  if (var.space == StateSpace::None) {
    cursor.fail(
        cursor.peek(),
        "expected a state space (.global, .shared, .param, ...) in the declaration, found " +
            TokenCursor::describe(cursor.peek()));
  }
  const Token& name = cursor.expect_identifier("the declared name");
  var.name = std::string(name.text);
  while (cursor.peek().is_punct('[')) {
    cursor.next();
    if (cursor.accept_punct(']')) {
      var.dims.emplace_back(std::nullopt);
      continue;
    }
    var.dims.emplace_back(cursor.expect_unsigned("an array size"));
    cursor.expect_punct(']', "to close the array size");
  }
  if (cursor.accept_punct('=')) var.init = parse_initializer(cursor, 0);
  return var;
}

RegisterDecl parse_register_decl(TokenCursor& cursor) {
  RegisterDecl decl;
  const Token& reg = cursor.next();  // .reg
  decl.location = reg.location;
  while (cursor.peek().kind == TokenKind::Directive) {
    const Token& t = cursor.next();
    for (std::string_view word : split_directive(t.text)) {
      if (word == "v2" || word == "v4" || word == "v8") {
        decl.vector_width = static_cast<uint32_t>(word[1] - '0');
      } else if (std::optional<Type> type = type_from_name(word)) {
        decl.type = *type;
      } else {
        cursor.fail(t, "unknown qualifier '." + std::string(word) +
                           "' in .reg (expected a type such as .b32)");
      }
    }
  }
  if (decl.type == Type::None)
    cursor.fail_expected("a register type (.pred, .b32, .f32, ...) after .reg");
  do {
    const Token& name = cursor.expect_identifier("a register name");
    RegisterName entry;
    entry.name = std::string(name.text);
    if (entry.name.find('.') != std::string::npos) {
      cursor.fail(name, "register name '" + entry.name + "' may not contain '.'");
    }
    if (cursor.accept_punct('<')) {
      const Token& count_token = cursor.peek();
      const uint64_t count = cursor.expect_unsigned("a register count inside < >");
      if (count > (1u << 24)) {
        cursor.fail(count_token,
                    "register count " + std::to_string(count) + " is too large (at most 16777216)");
      }
      entry.count = static_cast<uint32_t>(count);
      cursor.expect_punct('>', "to close the register count");
    }
    decl.names.push_back(std::move(entry));
  } while (cursor.accept_punct(','));
  cursor.expect_punct(';', "after the .reg declaration");
  return decl;
}

}  // namespace kiln::ptx::detail
