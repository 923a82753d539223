#include "kiln/ptx/instruction.h"

namespace kiln::ptx {

bool Instruction::has_modifier(std::string_view modifier) const {
  for (const std::string& m : modifiers) {
    if (m == modifier) return true;
  }
  return false;
}

Type Instruction::type() const { return types.empty() ? Type::None : types.back(); }

uint32_t Instruction::vector_width() const {
  for (const std::string& m : modifiers) {
    if (m == "v2") return 2;
    if (m == "v4") return 4;
    if (m == "v8") return 8;
  }
  return 1;
}

std::vector<StateSpace> Instruction::state_spaces() const {
  std::vector<StateSpace> spaces;
  for (const std::string& m : modifiers) {
    if (std::optional<StateSpace> space = state_space_from_name(m)) spaces.push_back(*space);
  }
  if (spaces.empty()) spaces.push_back(StateSpace::Generic);
  return spaces;
}

StateSpace Instruction::state_space() const {
  for (const std::string& m : modifiers) {
    if (std::optional<StateSpace> space = state_space_from_name(m)) return *space;
  }
  return StateSpace::Generic;
}

std::string Instruction::full_opcode() const {
  std::string out = name;
  for (const std::string& m : modifiers) {
    out += '.';
    out += m;
  }
  return out;
}

bool is_branch(const Instruction& inst) {
  return inst.opcode == Opcode::Bra || inst.opcode == Opcode::Brx;
}

bool ends_thread(const Instruction& inst) {
  return inst.opcode == Opcode::Ret || inst.opcode == Opcode::Exit || inst.opcode == Opcode::Trap;
}

bool is_terminator(const Instruction& inst) { return is_branch(inst) || ends_thread(inst); }

bool is_call(const Instruction& inst) { return inst.opcode == Opcode::Call; }

bool is_load(const Instruction& inst) {
  switch (inst.opcode) {
    case Opcode::Ld:
    case Opcode::Ldu:
    case Opcode::Ldmatrix:
    case Opcode::Tex:
    case Opcode::Tld4:
    case Opcode::Suld:
      return true;
    default:
      return false;
  }
}

bool is_store(const Instruction& inst) {
  return inst.opcode == Opcode::St || inst.opcode == Opcode::Stmatrix ||
         inst.opcode == Opcode::Sust;
}

bool is_atomic(const Instruction& inst) {
  return inst.opcode == Opcode::Atom || inst.opcode == Opcode::Red || inst.opcode == Opcode::Sured;
}

bool is_barrier(const Instruction& inst) {
  if (inst.opcode == Opcode::Barrier) return true;
  // bar.warp.sync synchronizes a warp, not the CTA.
  return inst.opcode == Opcode::Bar && !inst.has_modifier("warp");
}

}  // namespace kiln::ptx
