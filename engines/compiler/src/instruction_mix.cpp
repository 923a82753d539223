#include "kiln/compiler/instruction_mix.h"

namespace kiln::compiler {

namespace {

using ptx::Opcode;

bool starts_with(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

std::string space_word(const ptx::Instruction& inst) {
  switch (inst.state_space()) {
    case ptx::StateSpace::Global:
      return "global";
    case ptx::StateSpace::Shared:
    case ptx::StateSpace::SharedCta:
    case ptx::StateSpace::SharedCluster:
      return "shared";
    case ptx::StateSpace::Local:
      return "local";
    case ptx::StateSpace::Const:
      return "const";
    case ptx::StateSpace::Param:
    case ptx::StateSpace::ParamEntry:
    case ptx::StateSpace::ParamFunc:
      return "param";
    default:
      return "generic";
  }
}

// ld.global.v4.f32 -> "ld.global.128"; kernel parameter reads are not memory traffic.
std::string memory_key(const ptx::Instruction& inst, const char* verb) {
  const std::string space = inst.opcode == Opcode::Ldu ? "global" : space_word(inst);
  if (space == "param") return "";
  const uint32_t bits = inst.vector_width() * ptx::type_bits(inst.type());
  return std::string(verb) + "." + space + (bits > 0 ? "." + std::to_string(bits) : "");
}

// cp.async.ca.shared.global [dst], [src], 16 -> "cp.async.16"; the bulk and tensor forms,
// the group operations and the mbarrier arrive by name.
std::string copy_key(const ptx::Instruction& inst) {
  const std::string full = inst.full_opcode();
  if (starts_with(full, "cp.reduce.async.bulk")) return "cp.reduce.async.bulk";
  if (!inst.has_modifier("async")) return "cp";
  if (inst.has_modifier("bulk")) {
    if (inst.has_modifier("tensor")) return "cp.async.bulk.tensor";
    if (inst.has_modifier("commit_group")) return "cp.async.bulk.commit_group";
    if (inst.has_modifier("wait_group")) return "cp.async.bulk.wait_group";
    return "cp.async.bulk";
  }
  if (inst.has_modifier("commit_group")) return "cp.async.commit_group";
  if (inst.has_modifier("wait_group") || inst.has_modifier("wait_all")) return "cp.async.wait";
  if (inst.has_modifier("mbarrier")) return "cp.async.mbarrier.arrive";
  if (inst.operands.size() >= 3 && inst.operands[2].kind == ptx::OperandKind::Immediate)
    return "cp.async." + std::to_string(inst.operands[2].number.as_int());
  return "cp.async";
}

std::string barrier_key(const ptx::Instruction& inst) {
  if (inst.has_modifier("warp")) return "bar.warp.sync";
  if (inst.has_modifier("cluster"))
    return inst.has_modifier("wait") ? "barrier.cluster.wait" : "barrier.cluster.arrive";
  if (inst.has_modifier("arrive")) return "bar.arrive";
  if (inst.has_modifier("red")) return "bar.red";
  return "bar.sync";
}

}  // namespace

int InstructionMix::count(const std::string& key) const {
  auto it = counts.find(key);
  return it == counts.end() ? 0 : it->second;
}

int InstructionMix::tensor_core_ops() const {
  return count("mma.sync") + count("wgmma.mma_async") + count("wmma.mma");
}

nlohmann::json InstructionMix::to_json() const { return {{"total", total}, {"counts", counts}}; }

InstructionMix InstructionMix::from_json(const nlohmann::json& j) {
  InstructionMix mix;
  mix.total = j.value("total", 0);
  if (j.contains("counts") && j["counts"].is_object())
    mix.counts = j["counts"].get<std::map<std::string, int>>();
  return mix;
}

std::string mix_key(const ptx::Instruction& inst) {
  switch (inst.opcode) {
    case Opcode::Mma:
      return "mma.sync";
    case Opcode::Wgmma:
      return inst.modifiers.empty() ? "wgmma" : "wgmma." + inst.modifiers.front();
    case Opcode::Wmma:
      return inst.modifiers.empty() ? "wmma" : "wmma." + inst.modifiers.front();
    case Opcode::Ldmatrix:
      return "ldmatrix";
    case Opcode::Stmatrix:
      return "stmatrix";
    case Opcode::Movmatrix:
      return "movmatrix";
    case Opcode::Ld:
    case Opcode::Ldu:
      return memory_key(inst, "ld");
    case Opcode::St:
      return memory_key(inst, "st");
    case Opcode::Atom:
      return "atom." + space_word(inst);
    case Opcode::Red:
      return "red." + space_word(inst);
    case Opcode::Bar:
    case Opcode::Barrier:
      return barrier_key(inst);
    case Opcode::Membar:
      return "membar";
    case Opcode::Fence:
      return inst.has_modifier("proxy") ? "fence.proxy" : "fence";
    case Opcode::Cp:
      return copy_key(inst);
    case Opcode::Mbarrier:
      return inst.modifiers.empty() ? "mbarrier" : "mbarrier." + inst.modifiers.front();
    case Opcode::Shfl:
      return "shfl.sync";
    case Opcode::Vote:
      return "vote.sync";
    case Opcode::Match:
      return "match.sync";
    case Opcode::Redux:
      return "redux.sync";
    case Opcode::Elect:
      return "elect.sync";
    case Opcode::Setmaxnreg:
      return "setmaxnreg";
    case Opcode::Tcgen05:
      return inst.modifiers.empty() ? "tcgen05" : "tcgen05." + inst.modifiers.front();
    default:
      return "";
  }
}

InstructionMix instruction_mix(const ptx::Function& function) {
  InstructionMix mix;
  for (const ptx::Instruction& inst : function.instructions) {
    ++mix.total;
    const std::string key = mix_key(inst);
    if (!key.empty()) ++mix.counts[key];
  }
  return mix;
}

std::map<std::string, InstructionMix> kernel_instruction_mixes(const ptx::Module& module) {
  std::map<std::string, InstructionMix> out;
  for (const ptx::Function& function : module.functions) {
    if (function.is_kernel() && function.has_body) out[function.name] = instruction_mix(function);
  }
  return out;
}

}  // namespace kiln::compiler
