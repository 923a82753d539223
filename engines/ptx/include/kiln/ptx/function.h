// A PTX function (.entry kernel or .func) and its body. The body keeps every statement in
// source order (so it prints back faithfully); instructions, labels and declarations live in
// their own vectors, numbered densely for the analyses.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/ptx/instruction.h"
#include "kiln/ptx/registers.h"
#include "kiln/ptx/source_location.h"
#include "kiln/ptx/types.h"
#include "kiln/ptx/variable.h"

namespace kiln::ptx {

enum class FunctionKind : uint8_t { Entry, Func };

// A directive between the parameters and the body: .maxntid 256, 1, 1 / .noreturn /
// .reqnctapercluster 2, 1, 1 / .pragma "nounroll".
struct FunctionAttribute {
  std::string name;              // without the dot: "maxntid"
  std::vector<uint64_t> values;  // the integers, if any
  std::string text;              // .pragma: the string, quotes included

  bool operator==(const FunctionAttribute&) const = default;
};

enum class LabelKind : uint8_t {
  Code,           // a branch target
  CallPrototype,  // name: .callprototype ...
  BranchTargets,  // name: .branchtargets L1, L2;
  CallTargets,    // name: .calltargets f, g;
};

struct Label {
  std::string name;
  LabelKind kind = LabelKind::Code;
  uint32_t scope = 0;
  InstructionId target = 0;  // Code: the instruction that follows (instructions.size() at the end)
  uint32_t directive = kNone;  // other kinds: index into Function::directives
  SourceLocation location;

  bool operator==(const Label&) const = default;
};

// .loc file line column [, function_name $L__info_stringN[+k]] [, inlined_at file line column]
struct DebugLoc {
  uint32_t file = 0;
  uint32_t line = 0;
  uint32_t column = 0;
  std::string function_name;  // the debug-string label, when given
  int64_t function_name_offset = 0;
  bool inlined = false;
  uint32_t inlined_file = 0, inlined_line = 0, inlined_column = 0;
  SourceLocation location;

  bool operator==(const DebugLoc&) const = default;
};

// A directive kept as text: an unknown directive (with a warning), .callprototype, .branchtargets.
struct Directive {
  LabelId label = kNone;             // name: .callprototype ... (index into Function::labels)
  std::string text;                  // as written (tokens re-spaced), terminator included
  std::vector<std::string> targets;  // .branchtargets / .calltargets: the names listed
  SourceLocation location;

  bool operator==(const Directive&) const = default;
};

enum class StatementKind : uint8_t {
  Instruction,  // index into instructions
  Label,        // labels
  Registers,    // register_decls
  Variable,     // variables (.shared/.local/.param/.const/.global declared in the body)
  ScopeBegin,   // '{' opening scopes[index]
  ScopeEnd,     // '}' closing scopes[index]
  Loc,          // locs
  Pragma,       // pragmas
  Directive,    // directives
};

struct Statement {
  StatementKind kind = StatementKind::Instruction;
  uint32_t index = 0;
  bool operator==(const Statement&) const = default;
};

struct Scope {
  uint32_t parent = kNone;  // kNone for the body's outermost scope (scope 0)
  bool operator==(const Scope&) const = default;
};

struct Function {
  FunctionKind kind = FunctionKind::Func;
  Linkage linkage = Linkage::None;
  std::string name;
  std::vector<Variable> returns;  // .func (.param .b32 func_retval0) name
  std::vector<Variable> params;
  std::vector<FunctionAttribute> attributes;
  bool has_body = false;  // false: a declaration (prototype) ending in ';'
  SourceLocation location;

  std::vector<Statement> body;
  std::vector<Instruction> instructions;
  std::vector<Label> labels;
  std::vector<RegisterDecl> register_decls;
  std::vector<Variable> variables;
  std::vector<DebugLoc> locs;
  std::vector<std::string> pragmas;  // the string, quotes included
  std::vector<Directive> directives;
  std::vector<Scope> scopes;        // scope 0 is the body
  std::vector<Register> registers;  // every register the body names, in order of first use

  bool operator==(const Function&) const = default;

  bool is_kernel() const { return kind == FunctionKind::Entry; }
  const FunctionAttribute* attribute(std::string_view attribute_name) const;
  const Variable* param(std::string_view param_name) const;
  // A predicate operand is a Register operand whose register is declared .pred (negated: !%p).
  bool is_predicate(const Operand& operand) const;
  // True when scope `inner` is `outer` or nested inside it.
  bool scope_within(uint32_t inner, uint32_t outer) const;
};

}  // namespace kiln::ptx
