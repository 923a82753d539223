// Reaching definitions per register. A guarded definition (@%p mov ...) may or may not happen,
// so it adds itself without killing the earlier ones. Each register also has an "undefined at
// entry" pseudo-definition, so a read that some path reaches without any write is visible.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/ptx/cfg.h"
#include "kiln/ptx/function.h"

namespace kiln::ptx {

using DefinitionId = uint32_t;

struct Definition {
  InstructionId instruction = 0;
  RegisterId reg = 0;
  bool conditional = false;  // guarded
};

class ReachingDefinitions {
 public:
  static ReachingDefinitions compute(const Function& function, const ControlFlowGraph& cfg);

  const std::vector<Definition>& definitions() const { return defs_; }
  const std::vector<DefinitionId>& definitions_of(RegisterId reg) const { return by_reg_[reg]; }
  // The definitions of `reg` that reach the point just before `at` executes.
  std::vector<DefinitionId> reaching(InstructionId at, RegisterId reg) const;
  // True when some path from the entry reaches `at` without writing `reg`.
  bool may_be_undefined(InstructionId at, RegisterId reg) const;

 private:
  template <typename Visit>
  void scan(InstructionId at, RegisterId reg, Visit&& visit, bool& undefined) const;

  const Function* function_ = nullptr;
  const ControlFlowGraph* cfg_ = nullptr;
  std::vector<Definition> defs_;
  std::vector<std::vector<DefinitionId>> by_reg_;
  std::vector<std::vector<DefinitionId>> defs_at_;  // per instruction
  uint32_t words_ = 0;                              // 64-bit words per set
  std::vector<uint64_t> in_;                        // per block, words_ each
};

}  // namespace kiln::ptx
