#include "shared_object.h"

#include <set>

namespace kiln::check {
namespace {

constexpr int kMaxDepth = 16;

SharedObject unknown() { return {}; }

SharedObject trace_register(const FunctionContext& context, ptx::InstructionId at,
                            ptx::RegisterId reg, int depth);

SharedObject trace_operand(const FunctionContext& context, ptx::InstructionId at,
                           const ptx::Operand& op, int depth) {
  switch (op.kind) {
    case ptx::OperandKind::Symbol:
      return {op.name, op.offset};
    case ptx::OperandKind::Register:
      return trace_register(context, at, op.reg, depth);
    default:
      return unknown();
  }
}

// The object the value written by `def` points into.
SharedObject trace_definition(const FunctionContext& context, ptx::InstructionId def, int depth) {
  const ptx::Instruction& inst = context.instruction(def);
  const auto& ops = inst.operands;
  switch (inst.opcode) {
    case ptx::Opcode::Mov:
    case ptx::Opcode::Cvta:
    case ptx::Opcode::Cvt:
      if (ops.size() == 2) return trace_operand(context, def, ops[1], depth);
      return unknown();
    case ptx::Opcode::Add:
    case ptx::Opcode::Sub:
      if (ops.size() == 3) {
        SharedObject a = trace_operand(context, def, ops[1], depth);
        SharedObject b = inst.opcode == ptx::Opcode::Add
                             ? trace_operand(context, def, ops[2], depth)
                             : SharedObject{};
        if (a.known() && b.known()) return unknown();  // pointer + pointer: not an address
        SharedObject base = a.known() ? a : b;
        const ptx::Operand& other = a.known() ? ops[2] : ops[1];
        if (!base.known()) return unknown();
        if (other.kind == ptx::OperandKind::Immediate && base.offset) {
          const int64_t k = other.number.as_int();
          base.offset = *base.offset + (inst.opcode == ptx::Opcode::Add ? k : -k);
        } else {
          base.offset.reset();
        }
        return base;
      }
      return unknown();
    case ptx::Opcode::And:
      // Aligning a pointer up (add k-1; and -k), as code carving dynamic shared memory does:
      // the result is a new base whose distance to the symbol is unknown, but offsets from it
      // still tell objects apart.
      if (ops.size() == 3 && ops[2].kind == ptx::OperandKind::Immediate) {
        const SharedObject base = trace_operand(context, def, ops[1], depth);
        if (!base.known() || !base.offset) return base.known() ? base : unknown();
        return {"(" + base.to_string() + ")&" + std::to_string(ops[2].number.as_int()), 0};
      }
      return unknown();
    case ptx::Opcode::Mapa:
      // mapa d, a, rank: the same byte of shared memory in another CTA of the cluster. Every
      // CTA runs the same kernel, so it is the same variable (initialized by the same code).
      if (ops.size() == 3) return trace_operand(context, def, ops[1], depth);
      return unknown();
    case ptx::Opcode::Mad:
      // mad.lo r, i, size, base: an element of an array.
      if (ops.size() == 4) {
        SharedObject base = trace_operand(context, def, ops[3], depth);
        base.offset.reset();
        return base;
      }
      return unknown();
    default:
      return unknown();
  }
}

SharedObject trace_register(const FunctionContext& context, ptx::InstructionId at,
                            ptx::RegisterId reg, int depth) {
  if (depth >= kMaxDepth) return unknown();
  const ptx::ReachingDefinitions& rd = context.analysis().reaching;
  if (rd.may_be_undefined(at, reg)) return unknown();
  std::optional<SharedObject> result;
  for (ptx::DefinitionId d : rd.reaching(at, reg)) {
    const ptx::InstructionId def = rd.definitions()[d].instruction;
    if (def == at) return unknown();  // a loop-carried pointer bump: give up
    SharedObject o = trace_definition(context, def, depth + 1);
    if (!o.known()) return unknown();
    if (!result) {
      result = o;
    } else if (result->symbol != o.symbol) {
      return unknown();
    } else if (result->offset != o.offset) {
      result->offset.reset();
    }
  }
  return result.value_or(unknown());
}

}  // namespace

bool SharedObject::may_alias(const SharedObject& other) const {
  if (symbol != other.symbol) return false;
  return !offset || !other.offset || *offset == *other.offset;
}

std::string SharedObject::to_string() const {
  if (!known()) return "<unknown>";
  if (!offset) return symbol + "[?]";
  return *offset == 0 ? symbol : symbol + "+" + std::to_string(*offset);
}

SharedObject trace_address(const FunctionContext& context, ptx::InstructionId at,
                           const ptx::Operand& address) {
  if (address.kind != ptx::OperandKind::Address || address.elements.empty()) return unknown();
  SharedObject o = trace_operand(context, at, address.address_base(), 0);
  if (o.known() && o.offset) *o.offset += address.offset;
  return o;
}

}  // namespace kiln::check
