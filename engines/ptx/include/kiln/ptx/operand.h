// An instruction operand: a register, an immediate, an address, a vector, ...
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ptx/special_register.h"
#include "kiln/ptx/types.h"

namespace kiln::ptx {

using RegisterId = uint32_t;  // index into Function::registers
using LabelId = uint32_t;     // index into Function::labels
inline constexpr uint32_t kNone = UINT32_MAX;

enum class OperandKind : uint8_t {
  Register,         // %r1, or a scoped name such as P1 inside an inline-asm block; a predicate
                    // is a Register declared .pred (Function::is_predicate), maybe negated
  SpecialRegister,  // %tid.x, %laneid, %ctaid.y
  Immediate,        // integers 42, -1, 0x1F; floats 0f3F800000, 0d..., 1.5 (number.is_float())
  Symbol,           // a variable, function or parameter name, optionally +offset
  Label,            // a branch target (or a .callprototype / .branchtargets label)
  Address,          // [base], [base+offset], [base, {coords}]: elements[0] is the base
  Vector,           // {a, b, c, d}
  List,             // (a, b): the return and argument lists of call
  Pair,             // a|b: two destinations (setp, shfl, elect, match)
  Sink,             // _ : a destination whose value is discarded
};

struct Operand {
  OperandKind kind = OperandKind::Immediate;
  bool negated = false;                            // !%p
  RegisterId reg = kNone;                          // Register
  SpecialRegister special = SpecialRegister::Tid;  // SpecialRegister
  char component = 0;             // 'x', 'y', 'z', 'w' after a special or vector register; 0: none
  Number number;                  // Immediate
  std::string name;               // Symbol, Label, SpecialRegister: the name as written (%tid)
  LabelId label = kNone;          // Label: resolved in the instruction's scope
  int64_t offset = 0;             // Address and Symbol: the constant added to the base
  std::vector<Operand> elements;  // Vector, List, Pair; Address: base then extra operands

  bool is_register() const { return kind == OperandKind::Register; }
  const Operand& address_base() const { return elements.front(); }  // Address only

  bool operator==(const Operand&) const = default;

  static Operand make_register(RegisterId id);
  static Operand make_immediate(int64_t value);
  static Operand make_symbol(std::string symbol, int64_t offset = 0);
};

}  // namespace kiln::ptx
