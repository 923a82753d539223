#include "kiln/ptx/dominators.h"

#include <algorithm>

namespace kiln::ptx {
namespace {

// Reverse post-order of the graph given by `succ` from `root` (reachable nodes only).
std::vector<BlockId> reverse_post_order(const std::vector<std::vector<BlockId>>& succ,
                                        BlockId root) {
  std::vector<uint8_t> visited(succ.size(), 0);
  std::vector<std::pair<BlockId, uint32_t>> stack{{root, 0}};
  std::vector<BlockId> post;
  visited[root] = 1;
  while (!stack.empty()) {
    auto& [block, next] = stack.back();
    if (next < succ[block].size()) {
      const BlockId s = succ[block][next++];
      if (!visited[s]) {
        visited[s] = 1;
        stack.emplace_back(s, 0);
      }
    } else {
      post.push_back(block);
      stack.pop_back();
    }
  }
  return {post.rbegin(), post.rend()};
}

// Cooper, Harvey, Kennedy: "A Simple, Fast Dominance Algorithm" (2001).
std::vector<BlockId> iterate(const std::vector<std::vector<BlockId>>& preds,
                             const std::vector<BlockId>& rpo, BlockId root) {
  const auto n = static_cast<uint32_t>(preds.size());
  std::vector<uint32_t> order(n, kNone);
  for (uint32_t i = 0; i < rpo.size(); ++i) order[rpo[i]] = i;
  std::vector<BlockId> idom(n, kNone);
  idom[root] = root;
  auto intersect = [&](BlockId a, BlockId b) {
    while (a != b) {
      while (order[a] > order[b]) a = idom[a];
      while (order[b] > order[a]) b = idom[b];
    }
    return a;
  };
  bool changed = true;
  while (changed) {
    changed = false;
    for (BlockId b : rpo) {
      if (b == root) continue;
      BlockId new_idom = kNone;
      for (BlockId p : preds[b]) {
        if (order[p] == kNone || idom[p] == kNone) continue;
        new_idom = new_idom == kNone ? p : intersect(p, new_idom);
      }
      if (new_idom != kNone && idom[b] != new_idom) {
        idom[b] = new_idom;
        changed = true;
      }
    }
  }
  idom[root] = kNone;
  return idom;
}

}  // namespace

DominatorTree DominatorTree::dominators(const ControlFlowGraph& cfg) {
  DominatorTree tree;
  tree.root_ = cfg.entry();
  std::vector<std::vector<BlockId>> succ(cfg.size()), preds(cfg.size());
  for (BlockId b = 0; b < cfg.size(); ++b) {
    succ[b] = cfg.block(b).successors;
    preds[b] = cfg.block(b).predecessors;
  }
  tree.idom_ = iterate(preds, reverse_post_order(succ, tree.root_), tree.root_);
  tree.finish(preds);
  return tree;
}

DominatorTree DominatorTree::post_dominators(const ControlFlowGraph& cfg) {
  DominatorTree tree;
  tree.post_ = true;
  tree.root_ = cfg.exit();
  const uint32_t n = cfg.size();
  // On the reversed graph, a block's "successors" are its CFG predecessors.
  std::vector<std::vector<BlockId>> rsucc(n), rpreds(n);
  for (BlockId b = 0; b < n; ++b) {
    rsucc[b] = cfg.block(b).predecessors;
    rpreds[b] = cfg.block(b).successors;
  }
  // Blocks that cannot reach the exit (infinite loops): add virtual edges to the exit, from the
  // latest such block in forward reverse post-order, until every block reaches it.
  while (true) {
    std::vector<BlockId> order = reverse_post_order(rsucc, tree.root_);
    std::vector<uint8_t> reaches(n, 0);
    for (BlockId b : order) reaches[b] = 1;
    BlockId pick = kNone;
    for (BlockId b = 0; b < n; ++b) {
      if (reaches[b]) continue;
      const bool later = pick != kNone && cfg.reachable(b) &&
                         (!cfg.reachable(pick) || cfg.rpo_index(b) > cfg.rpo_index(pick));
      if (pick == kNone || later) pick = b;
    }
    if (pick == kNone) {
      tree.idom_ = iterate(rpreds, order, tree.root_);
      break;
    }
    rsucc[tree.root_].push_back(pick);
    rpreds[pick].push_back(tree.root_);
    tree.virtual_exits_.push_back(pick);
  }
  tree.finish(rpreds);
  return tree;
}

void DominatorTree::finish(const std::vector<std::vector<BlockId>>& preds) {
  const auto n = static_cast<uint32_t>(idom_.size());
  children_.assign(n, {});
  for (BlockId b = 0; b < n; ++b) {
    if (idom_[b] != kNone) children_[idom_[b]].push_back(b);
  }
  // Depths by a walk down from the root.
  depth_.assign(n, 0);
  std::vector<BlockId> stack{root_};
  while (!stack.empty()) {
    const BlockId b = stack.back();
    stack.pop_back();
    for (BlockId c : children_[b]) {
      depth_[c] = depth_[b] + 1;
      stack.push_back(c);
    }
  }
  // Frontiers (Cooper et al., figure 5): from each join, walk each predecessor up to the idom.
  frontier_.assign(n, {});
  for (BlockId b = 0; b < n; ++b) {
    if (!contains(b) || preds[b].size() < 2) continue;
    for (BlockId p : preds[b]) {
      if (!contains(p)) continue;
      for (BlockId runner = p; runner != idom_[b] && runner != kNone; runner = idom_[runner]) {
        std::vector<BlockId>& f = frontier_[runner];
        if (std::find(f.begin(), f.end(), b) == f.end()) f.push_back(b);
      }
    }
  }
  for (std::vector<BlockId>& f : frontier_) std::sort(f.begin(), f.end());
}

bool DominatorTree::dominates(BlockId a, BlockId b) const {
  if (a >= idom_.size() || b >= idom_.size() || !contains(a) || !contains(b)) return false;
  while (depth_[b] > depth_[a]) b = idom_[b];
  return a == b;
}

}  // namespace kiln::ptx
