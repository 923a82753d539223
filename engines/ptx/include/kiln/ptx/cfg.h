// The control-flow graph of one function body.
//
// Blocks are runs of consecutive instructions, split at code labels and after branches, ret,
// exit and trap. Edges: bra to its label (and to the next block when guarded); brx.idx to
// every label of its .branchtargets list, or, when that cannot be resolved, conservatively to
// every code label of the function; ret/exit/trap to the exit block (guarded: and onward);
// falling off the end to the exit block. The last block is a virtual exit with no instructions.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/ptx/function.h"

namespace kiln::ptx {

using BlockId = uint32_t;

struct BasicBlock {
  InstructionId first = 0;  // instructions [first, last)
  InstructionId last = 0;
  LabelId label = kNone;  // the first code label that starts it
  std::vector<BlockId> successors;
  std::vector<BlockId> predecessors;

  bool empty() const { return first == last; }
};

class ControlFlowGraph {
 public:
  static ControlFlowGraph build(const Function& function);

  const std::vector<BasicBlock>& blocks() const { return blocks_; }
  const BasicBlock& block(BlockId id) const { return blocks_[id]; }
  uint32_t size() const { return static_cast<uint32_t>(blocks_.size()); }
  BlockId entry() const { return 0; }
  BlockId exit() const { return size() - 1; }
  BlockId block_of(InstructionId inst) const { return block_of_[inst]; }
  // The block's last instruction when it is a branch/ret/exit/trap, else kNone.
  InstructionId terminator(BlockId id) const { return terminators_[id]; }
  // Blocks in reverse post-order from the entry (unreachable blocks are left out).
  const std::vector<BlockId>& reverse_post_order() const { return rpo_; }
  bool reachable(BlockId id) const { return rpo_index_[id] != kNone; }
  uint32_t rpo_index(BlockId id) const { return rpo_index_[id]; }
  // True when some brx.idx could not be resolved and got every label as a target.
  bool has_conservative_edges() const { return conservative_; }

 private:
  std::vector<BasicBlock> blocks_;
  std::vector<BlockId> block_of_;
  std::vector<InstructionId> terminators_;
  std::vector<BlockId> rpo_;
  std::vector<uint32_t> rpo_index_;
  bool conservative_ = false;
};

}  // namespace kiln::ptx
