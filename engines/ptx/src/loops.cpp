#include "kiln/ptx/loops.h"

#include <algorithm>

namespace kiln::ptx {

bool Loop::contains(BlockId block) const {
  return std::binary_search(blocks.begin(), blocks.end(), block);
}

uint32_t LoopInfo::depth(BlockId block) const {
  const uint32_t l = block < innermost_.size() ? innermost_[block] : kNone;
  return l == kNone ? 0 : loops_[l].depth;
}

LoopInfo LoopInfo::compute(const ControlFlowGraph& cfg, const DominatorTree& dom) {
  LoopInfo info;
  const uint32_t n = cfg.size();
  // Headers in reverse post-order, so an outer loop's header comes before its inner loops'.
  std::vector<Loop> loops;
  for (BlockId h : cfg.reverse_post_order()) {
    Loop loop;
    loop.header = h;
    for (BlockId p : cfg.block(h).predecessors) {
      if (cfg.reachable(p) && dom.dominates(h, p)) loop.latches.push_back(p);
    }
    if (loop.latches.empty()) continue;
    // The body: the header plus every block that reaches a latch without passing the header.
    std::vector<uint8_t> in(n, 0);
    in[h] = 1;
    std::vector<BlockId> work;
    for (BlockId l : loop.latches) {
      if (!in[l]) {
        in[l] = 1;
        work.push_back(l);
      }
    }
    while (!work.empty()) {
      const BlockId b = work.back();
      work.pop_back();
      for (BlockId p : cfg.block(b).predecessors) {
        if (!in[p] && cfg.reachable(p)) {
          in[p] = 1;
          work.push_back(p);
        }
      }
    }
    for (BlockId b = 0; b < n; ++b) {
      if (!in[b]) continue;
      loop.blocks.push_back(b);
      for (BlockId s : cfg.block(b).successors) {
        if (!in[s] && std::find(loop.exits.begin(), loop.exits.end(), s) == loop.exits.end()) {
          loop.exits.push_back(s);
        }
      }
    }
    std::sort(loop.exits.begin(), loop.exits.end());
    loops.push_back(std::move(loop));
  }
  // Nesting: the parent is the smallest other loop containing this header.
  for (uint32_t i = 0; i < loops.size(); ++i) {
    uint32_t best = kNone;
    for (uint32_t j = 0; j < loops.size(); ++j) {
      if (i == j || !loops[j].contains(loops[i].header)) continue;
      if (loops[j].blocks.size() <= loops[i].blocks.size()) continue;
      if (best == kNone || loops[j].blocks.size() < loops[best].blocks.size()) best = j;
    }
    loops[i].parent = best;
  }
  for (Loop& loop : loops) {
    loop.depth = 1;
    for (uint32_t p = loop.parent; p != kNone; p = loops[p].parent) ++loop.depth;
  }
  info.innermost_.assign(n, kNone);
  for (uint32_t i = 0; i < loops.size(); ++i) {
    for (BlockId b : loops[i].blocks) {
      const uint32_t current = info.innermost_[b];
      if (current == kNone || loops[i].blocks.size() < loops[current].blocks.size()) {
        info.innermost_[b] = i;
      }
    }
  }
  info.loops_ = std::move(loops);
  return info;
}

}  // namespace kiln::ptx
