// Natural loops: a back edge u -> h (h dominates u) gives the loop of header h; back edges to
// one header make one loop. Irreducible cycles (no dominating header) are not loops here.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/ptx/cfg.h"
#include "kiln/ptx/dominators.h"

namespace kiln::ptx {

struct Loop {
  BlockId header = 0;
  std::vector<BlockId> blocks;   // sorted, header included
  std::vector<BlockId> latches;  // sources of back edges
  std::vector<BlockId> exits;    // blocks outside the loop with a predecessor inside
  uint32_t parent = kNone;       // the innermost enclosing loop
  uint32_t depth = 1;            // 1 for an outermost loop

  bool contains(BlockId block) const;
};

class LoopInfo {
 public:
  static LoopInfo compute(const ControlFlowGraph& cfg, const DominatorTree& dominators);

  const std::vector<Loop>& loops() const { return loops_; }
  // The innermost loop containing `block`, or kNone.
  uint32_t innermost(BlockId block) const { return innermost_[block]; }
  uint32_t depth(BlockId block) const;

 private:
  std::vector<Loop> loops_;  // outer loops before the loops they contain
  std::vector<uint32_t> innermost_;
};

}  // namespace kiln::ptx
