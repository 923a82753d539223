// Function bodies: scopes, declarations, labels, .loc, and instructions with their operands.
#include <string>
#include <utility>

#include "kiln/ptx/def_use.h"
#include "name_scopes.h"
#include "parser_internal.h"

namespace kiln::ptx::detail {
namespace {

constexpr size_t kMaxScopeDepth = 256;

// A top-level operand written as a bare name: a label if one is in scope, else a symbol.
struct PendingName {
  InstructionId instruction;
  uint32_t operand;
  SourceLocation location;
};

class BodyParser {
 public:
  BodyParser(TokenCursor& cursor, Function& function)
      : cursor_(cursor), f_(function), names_(function) {}

  void run(const Token& open_brace) {
    open_scope(kNone);
    std::vector<uint32_t> stack{0};
    std::vector<SourceLocation> opened{open_brace.location};
    while (true) {
      const Token& t = cursor_.peek();
      if (t.kind == TokenKind::End) {
        cursor_.fail(t, "expected '}' to close the body of '" + f_.name + "' (opened at line " +
                            std::to_string(opened.back().line) + ":" +
                            std::to_string(opened.back().column) + "), found end of input");
      }
      if (t.is_punct('}')) {
        cursor_.next();
        if (stack.size() == 1) break;
        add_statement(StatementKind::ScopeEnd, stack.back());
        stack.pop_back();
        opened.pop_back();
        continue;
      }
      if (t.is_punct('{')) {
        if (stack.size() >= kMaxScopeDepth) cursor_.fail(t, "blocks nested more than 256 deep");
        cursor_.next();
        const uint32_t scope = open_scope(stack.back());
        add_statement(StatementKind::ScopeBegin, scope);
        stack.push_back(scope);
        opened.push_back(t.location);
        continue;
      }
      statement(stack.back());
    }
    resolve_names();
  }

 private:
  uint32_t open_scope(uint32_t parent) {
    const auto id = static_cast<uint32_t>(f_.scopes.size());
    f_.scopes.push_back(Scope{parent});
    names_.add_scope();
    return id;
  }

  void add_statement(StatementKind kind, size_t index) {
    f_.body.push_back(Statement{kind, static_cast<uint32_t>(index)});
  }

  void statement(uint32_t scope) {
    const Token& t = cursor_.peek();
    if (t.kind == TokenKind::Directive) {
      directive(scope);
    } else if (t.kind == TokenKind::Identifier && cursor_.peek(1).is_punct(':')) {
      label(scope);
    } else if (t.kind == TokenKind::Identifier || t.is_punct('@')) {
      instruction(scope);
    } else {
      cursor_.fail_expected("an instruction, a label, a directive or '}'");
    }
  }

  void directive(uint32_t scope) {
    const Token& t = cursor_.peek();
    const std::vector<std::string_view> words = split_directive(t.text);
    const std::string_view head = words.empty() ? std::string_view() : words.front();
    if (head == "reg") {
      RegisterDecl decl = parse_register_decl(cursor_);
      decl.scope = scope;
      const size_t index = f_.register_decls.size();
      f_.register_decls.push_back(std::move(decl));
      if (std::optional<std::string> error = names_.declare(scope, static_cast<uint32_t>(index))) {
        cursor_.fail(t, *error);
      }
      add_statement(StatementKind::Registers, index);
    } else if (head == "local" || head == "shared" || head == "param" || head == "const" ||
               head == "global" || head == "extern" || head == "align" ||
               head.starts_with("shared::") || head.starts_with("param::")) {
      Variable var = parse_variable(cursor_);
      cursor_.expect_punct(';', "after the declaration");
      add_statement(StatementKind::Variable, f_.variables.size());
      f_.variables.push_back(std::move(var));
    } else if (head == "loc") {
      loc();
    } else if (head == "pragma") {
      cursor_.next();
      const Token& s = cursor_.peek();
      if (s.kind != TokenKind::String) cursor_.fail_expected("a string after .pragma");
      cursor_.next();
      cursor_.expect_punct(';', "after the .pragma string");
      add_statement(StatementKind::Pragma, f_.pragmas.size());
      f_.pragmas.emplace_back(s.text);
    } else {
      cursor_.warn(t, "unknown directive " + TokenCursor::describe(t) + " in the body of '" +
                          f_.name + "'; kept as text");
      Directive d;
      d.location = t.location;
      d.text = skip_directive(cursor_);
      add_statement(StatementKind::Directive, f_.directives.size());
      f_.directives.push_back(std::move(d));
    }
  }

  uint32_t expect_u32(std::string_view what) {
    const Token& t = cursor_.peek();
    const uint64_t v = cursor_.expect_unsigned(what);
    if (v > UINT32_MAX) cursor_.fail(t, std::string(what) + " does not fit in 32 bits");
    return static_cast<uint32_t>(v);
  }

  void loc() {
    DebugLoc loc;
    loc.location = cursor_.next().location;
    loc.file = expect_u32("a file number after .loc");
    loc.line = expect_u32("a line number in .loc");
    loc.column = expect_u32("a column number in .loc");
    while (cursor_.peek().is_punct(',')) {
      cursor_.next();
      const Token& key = cursor_.expect_identifier("function_name or inlined_at after ',' in .loc");
      if (key.text == "function_name") {
        loc.function_name =
            std::string(cursor_.expect_identifier("a label after function_name").text);
        if (cursor_.accept_punct('+')) {
          loc.function_name_offset = static_cast<int64_t>(cursor_.expect_unsigned("an offset"));
        }
      } else if (key.text == "inlined_at") {
        loc.inlined = true;
        loc.inlined_file = expect_u32("a file number after inlined_at");
        loc.inlined_line = expect_u32("a line number after inlined_at");
        loc.inlined_column = expect_u32("a column number after inlined_at");
      } else {
        cursor_.fail(key, "unknown .loc attribute " + TokenCursor::describe(key) +
                              " (expected function_name or inlined_at)");
      }
    }
    current_loc_ = static_cast<uint32_t>(f_.locs.size());
    add_statement(StatementKind::Loc, f_.locs.size());
    f_.locs.push_back(std::move(loc));
  }

  void label(uint32_t scope) {
    const Token& name = cursor_.next();
    cursor_.next();  // ':'
    Label label;
    label.name = std::string(name.text);
    label.scope = scope;
    label.target = static_cast<InstructionId>(f_.instructions.size());
    label.location = name.location;
    const auto id = static_cast<LabelId>(f_.labels.size());
    if (std::optional<LabelId> previous = names_.declare_label(scope, name.text, id)) {
      cursor_.fail(name, "label '" + label.name +
                             "' is defined twice in this scope (first at line " +
                             std::to_string(f_.labels[*previous].location.line) + ")");
    }
    const Token& next = cursor_.peek();
    if (next.kind == TokenKind::Directive &&
        (next.text == ".callprototype" || next.text == ".branchtargets" ||
         next.text == ".calltargets")) {
      label.kind = next.text == ".callprototype"   ? LabelKind::CallPrototype
                   : next.text == ".branchtargets" ? LabelKind::BranchTargets
                                                   : LabelKind::CallTargets;
      Directive d;
      d.label = id;
      d.location = next.location;
      const size_t first = cursor_.position();
      if (label.kind != LabelKind::CallPrototype) {
        cursor_.next();
        do {
          d.targets.emplace_back(cursor_.expect_identifier("a label name in the target list").text);
        } while (cursor_.accept_punct(','));
        cursor_.expect_punct(';', "after the target list");
        d.text = join_tokens(cursor_, first, cursor_.position());
      } else {
        d.text = skip_directive(cursor_);
      }
      label.directive = static_cast<uint32_t>(f_.directives.size());
      add_statement(StatementKind::Directive, f_.directives.size());
      f_.directives.push_back(std::move(d));
    } else {
      add_statement(StatementKind::Label, id);
    }
    f_.labels.push_back(std::move(label));
  }

  RegisterId register_named(const Token& at, std::string_view name, uint32_t scope) {
    std::optional<RegisterId> id = names_.find_register(scope, name);
    if (!id) {
      cursor_.fail(at, "register '" + std::string(name) +
                           "' is not declared in this scope (declare it with .reg)");
    }
    return *id;
  }

  void instruction(uint32_t scope) {
    Instruction inst;
    inst.location = cursor_.peek().location;
    inst.scope = scope;
    inst.loc = current_loc_;
    if (cursor_.accept_punct('@')) {
      Guard guard;
      guard.negated = cursor_.accept_punct('!');
      const Token& p = cursor_.expect_identifier("a predicate register after '@'");
      guard.reg = register_named(p, p.text, scope);
      inst.guard = guard;
    }
    const Token& op = cursor_.expect_identifier("an instruction opcode");
    std::string_view full = op.text;
    const size_t dot = full.find('.');
    inst.name = std::string(full.substr(0, dot));
    if (dot != std::string_view::npos) {
      for (std::string_view word : split_directive(full.substr(dot))) {
        inst.modifiers.emplace_back(word);
        if (std::optional<Type> type = type_from_name(word)) inst.types.push_back(*type);
      }
    }
    inst.opcode = opcode_from_name(inst.name);
    if (inst.opcode == Opcode::Unknown) {
      cursor_.warn(op, "unknown instruction '" + inst.name + "'; kept as a generic instruction");
    }
    const auto id = static_cast<InstructionId>(f_.instructions.size());
    SourceLocation first_operand = cursor_.peek().location;
    if (!cursor_.peek().is_punct(';')) {
      do {
        const Token& at = cursor_.peek();
        Operand operand = parse_operand(scope, 0);
        if (operand.kind == OperandKind::Symbol && operand.offset == 0 && !operand.negated) {
          pending_.push_back({id, static_cast<uint32_t>(inst.operands.size()), at.location});
        }
        inst.operands.push_back(std::move(operand));
      } while (cursor_.accept_punct(','));
    }
    if (!cursor_.peek().is_punct(';')) {
      cursor_.fail_expected("',' or ';' after operand " + std::to_string(inst.operands.size()) +
                            " of '" + std::string(full) + "'");
    }
    // A name that is no register in scope cannot be written (a register used outside the
    // inline-asm block that declares it reads as a plain symbol).
    if (inst.opcode != Opcode::Unknown && writes_first_operand(inst) &&
        inst.operands[0].kind == OperandKind::Symbol) {
      throw ParseError{Diagnostic{Severity::Error, first_operand,
                                  "'" + inst.operands[0].name +
                                      "' is not a register in this scope, "
                                      "so '" +
                                      std::string(full) +
                                      "' cannot write it (declare it with .reg)"}};
    }
    cursor_.next();
    add_statement(StatementKind::Instruction, id);
    f_.instructions.push_back(std::move(inst));
  }

  // A name: register (declared), special register, sink, or symbol (maybe a label later).
  Operand name_operand(const Token& t, uint32_t scope) {
    Operand op;
    std::string_view name = t.text;
    if (name == "_") {
      op.kind = OperandKind::Sink;
      return op;
    }
    std::string_view base = name;
    char component = 0;
    if (const size_t dot = name.find('.'); dot != std::string_view::npos) {
      base = name.substr(0, dot);
      std::string_view comp = name.substr(dot + 1);
      if (comp.size() != 1 ||
          std::string_view("xyzwrgba").find(comp[0]) == std::string_view::npos) {
        cursor_.fail(t, "unexpected component '." + std::string(comp) + "' in " +
                            TokenCursor::describe(t) + " (expected .x, .y, .z or .w)");
      }
      component = comp[0];
    }
    if (std::optional<RegisterId> id = names_.find_register(scope, base)) {
      op.kind = OperandKind::Register;
      op.reg = *id;
      op.component = component;
      return op;
    }
    if (base.starts_with('%')) {
      if (std::optional<SpecialRegister> special = special_register_from_name(base)) {
        op.kind = OperandKind::SpecialRegister;
        op.special = *special;
        op.name = std::string(base);
        op.component = component;
        return op;
      }
      cursor_.fail(t, "register '" + std::string(base) +
                          "' is not declared in this scope and is not a special register "
                          "(declare it with .reg)");
    }
    if (component != 0) {
      cursor_.fail(t, "'" + std::string(base) + "' is not a register, so it has no components");
    }
    op.kind = OperandKind::Symbol;
    op.name = std::string(name);
    return op;
  }

  int64_t signed_offset() {
    bool negative = false;
    bool any = false;
    while (cursor_.peek().is_punct('+') || cursor_.peek().is_punct('-')) {
      if (cursor_.next().text == "-") negative = !negative;
      any = true;
    }
    if (!any) return 0;
    const Token& t = cursor_.peek();
    const uint64_t v = cursor_.expect_unsigned("an integer offset after '+' or '-'");
    if (v > static_cast<uint64_t>(INT64_MAX)) cursor_.fail(t, "offset does not fit in 64 bits");
    const auto magnitude = static_cast<int64_t>(v);
    return negative ? -magnitude : magnitude;
  }

  Operand number_operand(bool negative) {
    const Token& t = cursor_.peek();
    std::string error;
    std::optional<Number> n = parse_number(t.text, error);
    if (!n) cursor_.fail(t, error);
    cursor_.next();
    Operand op;
    op.kind = OperandKind::Immediate;
    op.number = *n;
    if (negative) {
      if (n->format == NumberFormat::HexF32) {
        op.number.bits ^= 0x80000000u;
      } else if (n->is_float()) {
        op.number.bits ^= 0x8000000000000000ull;
      } else {
        op.number.bits = ~n->bits + 1;
        if (op.number.format == NumberFormat::DecimalUnsigned) {
          op.number.format = NumberFormat::Decimal;
        }
      }
    }
    return op;
  }

  Operand parse_operand(uint32_t scope, int depth) {
    if (depth > 4) cursor_.fail(cursor_.peek(), "operands nested too deeply");
    const Token& t = cursor_.peek();
    if (t.is_punct('!')) {
      cursor_.next();
      Operand op = parse_operand(scope, depth + 1);
      if (op.kind != OperandKind::Register)
        cursor_.fail(t, "'!' applies only to a predicate register");
      op.negated = !op.negated;
      return op;
    }
    if (t.is_punct('-') || t.is_punct('+')) {
      bool negative = false;
      while (cursor_.peek().is_punct('-') || cursor_.peek().is_punct('+')) {
        if (cursor_.next().text == "-") negative = !negative;
      }
      const Token& n = cursor_.peek();
      if (n.kind != TokenKind::Integer && n.kind != TokenKind::Float) {
        cursor_.fail_expected("a number after the sign");
      }
      return number_operand(negative);
    }
    if (t.kind == TokenKind::Integer || t.kind == TokenKind::Float) return number_operand(false);
    if (t.kind == TokenKind::Identifier) {
      cursor_.next();
      Operand op = name_operand(t, scope);
      if (op.kind == OperandKind::Symbol) {
        op.offset = signed_offset();
      } else if (cursor_.peek().is_punct('|')) {
        cursor_.next();
        const Token& second = cursor_.expect_identifier("a register after '|'");
        Operand pair;
        pair.kind = OperandKind::Pair;
        pair.elements.push_back(std::move(op));
        pair.elements.push_back(name_operand(second, scope));
        return pair;
      }
      return op;
    }
    if (t.is_punct('[')) return address(scope, depth);
    if (t.is_punct('{')) return list(scope, depth, '{', '}', OperandKind::Vector);
    if (t.is_punct('(')) return list(scope, depth, '(', ')', OperandKind::List);
    cursor_.fail_expected("an operand (a register, a number, a name, [address] or {vector})");
  }

  Operand address(uint32_t scope, int depth) {
    const Token& open = cursor_.next();  // '['
    Operand op;
    op.kind = OperandKind::Address;
    const Token& t = cursor_.peek();
    Operand base;
    if (t.kind == TokenKind::Identifier) {
      cursor_.next();
      base = name_operand(t, scope);
      if (base.kind == OperandKind::Sink) cursor_.fail(t, "'_' cannot be an address");
    } else if (t.kind == TokenKind::Integer) {
      base = number_operand(false);
    } else {
      cursor_.fail_expected("a register, a name or an integer inside [ ]");
    }
    op.elements.push_back(std::move(base));
    op.offset = signed_offset();
    while (cursor_.accept_punct(',')) op.elements.push_back(parse_operand(scope, depth + 1));
    if (!cursor_.peek().is_punct(']')) {
      cursor_.fail_expected("']' to close the address opened at line " +
                            std::to_string(open.location.line) + ":" +
                            std::to_string(open.location.column));
    }
    cursor_.next();
    return op;
  }

  Operand list(uint32_t scope, int depth, char open, char close, OperandKind kind) {
    const Token& start = cursor_.next();
    Operand op;
    op.kind = kind;
    if (!cursor_.peek().is_punct(close)) {
      do {
        op.elements.push_back(parse_operand(scope, depth + 1));
      } while (cursor_.accept_punct(','));
    }
    if (!cursor_.peek().is_punct(close)) {
      cursor_.fail_expected(std::string("'") + close + "' to close the '" + open +
                            "' opened at line " + std::to_string(start.location.line) + ":" +
                            std::to_string(start.location.column));
    }
    cursor_.next();
    if (kind == OperandKind::Vector && op.elements.empty()) {
      cursor_.fail(start, "a vector operand needs at least one element");
    }
    return op;
  }

  // Bare names become labels where a label of that name is in scope. A branch must name one.
  void resolve_names() {
    for (const PendingName& p : pending_) {
      Instruction& inst = f_.instructions[p.instruction];
      Operand& op = inst.operands[p.operand];
      if (std::optional<LabelId> label = names_.find_label(inst.scope, op.name)) {
        op.kind = OperandKind::Label;
        op.label = *label;
      }
    }
    for (Instruction& inst : f_.instructions) {
      if (inst.opcode != Opcode::Bra) continue;
      if (inst.operands.size() != 1 || inst.operands[0].kind != OperandKind::Label ||
          f_.labels[inst.operands[0].label].kind != LabelKind::Code) {
        const std::string target = inst.operands.empty() ? std::string("nothing")
                                   : inst.operands[0].name.empty()
                                       ? std::string("an operand that is not a name")
                                       : "'" + inst.operands[0].name + "'";
        throw ParseError{
            Diagnostic{Severity::Error, inst.location,
                       "bra needs one code label in scope as its target, found " + target}};
      }
    }
    for (Directive& d : f_.directives) {
      if (d.label == kNone || f_.labels[d.label].kind != LabelKind::BranchTargets) continue;
      for (const std::string& target : d.targets) {
        if (!names_.find_label(f_.labels[d.label].scope, target)) {
          throw ParseError{
              Diagnostic{Severity::Error, d.location,
                         ".branchtargets names '" + target + "', which is not a label in scope"}};
        }
      }
    }
  }

  TokenCursor& cursor_;
  Function& f_;
  NameScopes names_;
  std::vector<PendingName> pending_;
  uint32_t current_loc_ = kNone;
};

}  // namespace

void parse_body(TokenCursor& cursor, Function& function, const Token& open_brace) {
  BodyParser(cursor, function).run(open_brace);
}

}  // namespace kiln::ptx::detail
