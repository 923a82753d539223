#include "constant_value.h"

#include <set>

#include "kiln/ptx/def_use.h"

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

namespace kiln::check {

ValueUse branch_predicate(const FunctionContext& context, ptx::BlockId block) {
  const ptx::InstructionId term = context.cfg().terminator(block);
  if (term == ptx::kNone) return {};
  const ptx::Instruction& inst = context.instruction(term);
  if (inst.guard) return {term, inst.guard->reg};
  if (inst.opcode == ptx::Opcode::Brx && !inst.operands.empty() && inst.operands[0].is_register()) {
    return {term, inst.operands[0].reg};
  }
  return {};
}

std::vector<ptx::InstructionId> value_slice(
    const FunctionContext& context, const std::vector<ValueUse>& roots,
    const std::function<bool(ptx::BlockId)>& follow_branch) {
  const ptx::ReachingDefinitions& rd = context.analysis().reaching;
  std::vector<char> in_slice(context.function().instructions.size(), 0);
  std::set<ptx::BlockId> branches_followed;
  std::vector<ValueUse> work = roots;
  std::vector<ptx::RegisterId> uses;
  while (!work.empty()) {
    const ValueUse use = work.back();
    work.pop_back();
    if (use.reg == ptx::kNone) continue;
    for (ptx::DefinitionId d : rd.reaching(use.at, use.reg)) {
      const ptx::InstructionId def = rd.definitions()[d].instruction;
      if (in_slice[def]) continue;
      in_slice[def] = 1;
      uses.clear();
      ptx::append_uses(context.instruction(def), uses);
      for (ptx::RegisterId reg : uses) work.push_back({def, reg});
      if (!follow_branch) continue;
      for (ptx::BlockId branch : context.controlling_branches(context.cfg().block_of(def))) {
        if (!follow_branch(branch) || !branches_followed.insert(branch).second) continue;
        work.push_back(branch_predicate(context, branch));
      }
    }
  }
  std::vector<ptx::InstructionId> slice;
  for (ptx::InstructionId id = 0; id < in_slice.size(); ++id) {
    if (in_slice[id]) slice.push_back(id);
  }
  return slice;
}

}  // namespace kiln::check
