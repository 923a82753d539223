#include "kiln/ptx/def_use.h"

namespace kiln::ptx {
namespace {

void append_registers(const Operand& op, std::vector<RegisterId>& out) {
  if (op.kind == OperandKind::Register) {
    out.push_back(op.reg);
    return;
  }
  for (const Operand& e : op.elements) append_registers(e, out);
}

}  // namespace

bool writes_first_operand(const Instruction& inst) {
  if (inst.operands.empty()) return false;
  switch (inst.opcode) {
    // bar.red.popc.u32 %r, 0, %p (and barrier.cta.red): a CTA-wide reduction into %r.
    case Opcode::Bar:
    case Opcode::Barrier:
      return inst.has_modifier("red");
    // No value produced, or the first operand is a source (bar.sync %r, brx.idx %r, ...).
    case Opcode::Bra:
    case Opcode::Brx:
    case Opcode::Call:
    case Opcode::Ret:
    case Opcode::Exit:
    case Opcode::Trap:
    case Opcode::Brkpt:
    case Opcode::Nanosleep:
    case Opcode::Membar:
    case Opcode::Fence:
    case Opcode::Pmevent:
    case Opcode::Griddepcontrol:
    case Opcode::Setmaxnreg:
    case Opcode::Prefetch:
    case Opcode::Prefetchu:
    case Opcode::Applypriority:
    case Opcode::Discard:
    case Opcode::St:
    case Opcode::Red:
    case Opcode::Sust:
    case Opcode::Sured:
    case Opcode::Stmatrix:
    case Opcode::Cp:
    case Opcode::Stackrestore:
    case Opcode::Tensormap:
      return false;
    case Opcode::Tcgen05:
      return !inst.modifiers.empty() && inst.modifiers.front() == "ld";
    default:
      return true;
  }
}

bool has_destination(const Instruction& inst) {
  if (!writes_first_operand(inst)) return false;
  const OperandKind k = inst.operands.front().kind;
  return k == OperandKind::Register || k == OperandKind::Vector || k == OperandKind::Pair ||
         k == OperandKind::Sink;
}

bool reads_destination(const Instruction& inst) {
  return inst.opcode == Opcode::Wgmma && inst.has_modifier("mma_async");
}

bool call_returns_registers(const Instruction& inst) {
  return inst.opcode == Opcode::Call && inst.operands.size() >= 2 &&
         inst.operands.front().kind == OperandKind::List;
}

void append_defs(const Instruction& inst, std::vector<RegisterId>& out) {
  if (call_returns_registers(inst)) {
    append_registers(inst.operands.front(), out);
    return;
  }
  if (!has_destination(inst)) return;
  append_registers(inst.operands.front(), out);
}

void append_uses(const Instruction& inst, std::vector<RegisterId>& out) {
  if (inst.guard) out.push_back(inst.guard->reg);
  const bool skip_first =
      (has_destination(inst) && !reads_destination(inst)) || call_returns_registers(inst);
  for (size_t i = skip_first ? 1 : 0; i < inst.operands.size(); ++i) {
    append_registers(inst.operands[i], out);
  }
}

}  // namespace kiln::ptx
