#include "kiln/ptx/function.h"

namespace kiln::ptx {

const FunctionAttribute* Function::attribute(std::string_view attribute_name) const {
  for (const FunctionAttribute& a : attributes) {
    if (a.name == attribute_name) return &a;
  }
  return nullptr;
}

const Variable* Function::param(std::string_view param_name) const {
  for (const Variable& p : params) {
    if (p.name == param_name) return &p;
  }
  for (const Variable& r : returns) {
    if (r.name == param_name) return &r;
  }
  return nullptr;
}

bool Function::is_predicate(const Operand& operand) const {
  return operand.kind == OperandKind::Register && operand.reg < registers.size() &&
         registers[operand.reg].type == Type::Pred;
}

bool Function::scope_within(uint32_t inner, uint32_t outer) const {
  for (uint32_t s = inner; s != kNone && s < scopes.size(); s = scopes[s].parent) {
    if (s == outer) return true;
  }
  return false;
}

}  // namespace kiln::ptx
