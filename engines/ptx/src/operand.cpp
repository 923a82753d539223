#include "kiln/ptx/operand.h"

#include <utility>

namespace kiln::ptx {

Operand Operand::make_register(RegisterId id) {
  Operand op;
  op.kind = OperandKind::Register;
  op.reg = id;
  return op;
}

Operand Operand::make_immediate(int64_t value) {
  Operand op;
  op.kind = OperandKind::Immediate;
  op.number.bits = static_cast<uint64_t>(value);
  return op;
}

Operand Operand::make_symbol(std::string symbol, int64_t offset) {
  Operand op;
  op.kind = OperandKind::Symbol;
  op.name = std::move(symbol);
  op.offset = offset;
  return op;
}

}  // namespace kiln::ptx
