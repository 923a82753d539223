// Dominator and post-dominator trees (Cooper, Harvey and Kennedy's iterative algorithm) and
// dominance frontiers.
//
// Post-dominance is computed on the reversed graph rooted at the virtual exit. Blocks that
// cannot reach the exit (an infinite loop) get a virtual edge to it from the loop block latest
// in reverse post-order, so every block has an immediate post-dominator.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/ptx/cfg.h"

namespace kiln::ptx {

class DominatorTree {
 public:
  static DominatorTree dominators(const ControlFlowGraph& cfg);
  static DominatorTree post_dominators(const ControlFlowGraph& cfg);

  bool is_post() const { return post_; }
  BlockId root() const { return root_; }
  // The immediate (post-)dominator; kNone for the root and for blocks not in the tree.
  BlockId idom(BlockId block) const { return idom_[block]; }
  bool contains(BlockId block) const { return block == root_ || idom_[block] != kNone; }
  // a (post-)dominates b; every block dominates itself.
  bool dominates(BlockId a, BlockId b) const;
  const std::vector<BlockId>& children(BlockId block) const { return children_[block]; }
  // Dominance frontier (post-dominance frontier for a post-dominator tree): the blocks where
  // `block`'s dominance ends. The post-dominance frontier of B is the set of branches B is
  // control dependent on.
  const std::vector<BlockId>& frontier(BlockId block) const { return frontier_[block]; }
  // Virtual edges added so every block reaches the exit (post-dominators only): {from, exit}.
  const std::vector<BlockId>& virtual_exit_edges() const { return virtual_exits_; }

 private:
  void finish(const std::vector<std::vector<BlockId>>& preds);

  bool post_ = false;
  BlockId root_ = 0;
  std::vector<BlockId> idom_;
  std::vector<uint32_t> depth_;
  std::vector<std::vector<BlockId>> children_;
  std::vector<std::vector<BlockId>> frontier_;
  std::vector<BlockId> virtual_exits_;
};

}  // namespace kiln::ptx
