// A static instruction mix per kernel, counted in the PTX (instructions in the code, not
// instructions executed: a loop body counts once). Keys name what a kernel engineer looks
// for: tensor-core ops ("mma.sync", "wgmma.mma_async"), memory by space and width in bits
// ("ld.global.128", "st.shared.32"), "ldmatrix"/"stmatrix", atomics ("atom.global"),
// barriers ("bar.sync"), async copies ("cp.async.16", "cp.async.bulk.tensor"), mbarrier
// operations ("mbarrier.try_wait"), warp collectives ("shfl.sync", "vote.sync").
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/ptx/function.h"
#include "kiln/ptx/module.h"

namespace kiln::compiler {

struct InstructionMix {
  std::map<std::string, int> counts;  // key -> static count; only keys that occur
  int total = 0;                      // every instruction of the function

  int count(const std::string& key) const;
  // Sums of the families: tensor-core ops, global/shared loads and stores, barriers, async copies.
  int tensor_core_ops() const;
  nlohmann::json to_json() const;  // {"total": N, "counts": {...}}
  static InstructionMix from_json(const nlohmann::json& j);
};

// The mix key of one instruction, or "" for instructions the mix does not single out
// (arithmetic, moves, branches): those count only towards the total.
std::string mix_key(const ptx::Instruction& instruction);

InstructionMix instruction_mix(const ptx::Function& function);

// One mix per kernel (.entry with a body), by its PTX (mangled) name. Instructions of device
// functions that were not inlined (.func) are not added to their callers.
std::map<std::string, InstructionMix> kernel_instruction_mixes(const ptx::Module& module);

}  // namespace kiln::compiler
