#include "constant_value.h"

namespace kiln::check {

std::optional<int64_t> constant_value(const FunctionContext& context, ptx::InstructionId at,
                                      const ptx::Operand& operand) {
  if (operand.kind == ptx::OperandKind::Immediate && !operand.number.is_float()) {
    return operand.number.as_int();
  }
  if (operand.kind != ptx::OperandKind::Register) return std::nullopt;
  const ptx::ReachingDefinitions& rd = context.analysis().reaching;
  if (rd.may_be_undefined(at, operand.reg)) return std::nullopt;
  std::optional<int64_t> value;
  for (ptx::DefinitionId d : rd.reaching(at, operand.reg)) {
    const ptx::Definition& def = rd.definitions()[d];
    const ptx::Instruction& inst = context.instruction(def.instruction);
    if (def.conditional || inst.opcode != ptx::Opcode::Mov || inst.operands.size() != 2) {
      return std::nullopt;
    }
    const ptx::Operand& source = inst.operands[1];
    if (source.kind != ptx::OperandKind::Immediate || source.number.is_float()) {
      return std::nullopt;
    }
    if (value && *value != source.number.as_int()) return std::nullopt;
    value = source.number.as_int();
  }
  return value;
}

}  // namespace kiln::check
