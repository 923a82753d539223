#include "kiln/ptx/dominators.h"

#include <gtest/gtest.h>

#include "graphs.h"

namespace kiln::ptx {
namespace {

using testing::kernel;
using testing::parse_ok;
using Blocks = std::vector<BlockId>;

TEST(Dominators, FindsImmediateDominatorsOfADiamond) {
  Module m = parse_ok(testing::diamond());
  const ControlFlowGraph cfg = ControlFlowGraph::build(m.functions[0]);
  const DominatorTree dom = DominatorTree::dominators(cfg);
  EXPECT_EQ(dom.root(), 0u);
  EXPECT_EQ(dom.idom(0), kNone);
  EXPECT_EQ(dom.idom(1), 0u);
  EXPECT_EQ(dom.idom(2), 0u);
  EXPECT_EQ(dom.idom(3), 0u);
  EXPECT_EQ(dom.idom(4), 3u);
  EXPECT_TRUE(dom.dominates(0, 3));
  EXPECT_FALSE(dom.dominates(1, 3));
  EXPECT_TRUE(dom.dominates(3, 3));
  EXPECT_EQ(dom.children(0), (Blocks{1, 2, 3}));
  EXPECT_EQ(dom.frontier(1), (Blocks{3}));
  EXPECT_EQ(dom.frontier(2), (Blocks{3}));
  EXPECT_TRUE(dom.frontier(0).empty());
}

TEST(Dominators, FindsPostDominatorsAndControlDependence) {
  Module m = parse_ok(testing::diamond());
  const ControlFlowGraph cfg = ControlFlowGraph::build(m.functions[0]);
  const DominatorTree pdom = DominatorTree::post_dominators(cfg);
  EXPECT_TRUE(pdom.is_post());
  EXPECT_EQ(pdom.root(), cfg.exit());
  EXPECT_EQ(pdom.idom(0), 3u);  // the branch reconverges at the join
  EXPECT_EQ(pdom.idom(1), 3u);
  EXPECT_EQ(pdom.idom(2), 3u);
  EXPECT_EQ(pdom.idom(3), 4u);
  EXPECT_TRUE(pdom.dominates(3, 0));
  EXPECT_FALSE(pdom.dominates(1, 0));
  // Both arms are control dependent on the branch in block 0.
  EXPECT_EQ(pdom.frontier(1), (Blocks{0}));
  EXPECT_EQ(pdom.frontier(2), (Blocks{0}));
  EXPECT_TRUE(pdom.frontier(3).empty());
  EXPECT_TRUE(pdom.virtual_exit_edges().empty());
}

TEST(Dominators, HandlesLoops) {
  Module m = parse_ok(testing::counted_loop());
  const ControlFlowGraph cfg = ControlFlowGraph::build(m.functions[0]);
  const DominatorTree dom = DominatorTree::dominators(cfg);
  const DominatorTree pdom = DominatorTree::post_dominators(cfg);
  EXPECT_EQ(dom.idom(1), 0u);
  EXPECT_EQ(dom.idom(2), 1u);
  EXPECT_EQ(dom.frontier(1), (Blocks{1}));  // the header is in its own frontier
  EXPECT_EQ(pdom.idom(1), 2u);
  EXPECT_EQ(pdom.frontier(1), (Blocks{1}));  // the body depends on its own latch branch
}

TEST(Dominators, ConnectsInfiniteLoopsToTheExit) {
  Module m =
      parse_ok(kernel("@%p1 bra $SPIN;\nret;\n$SPIN:\nadd.u32 %r1, %r1, 1;\nbra.uni $SPIN;"));
  const ControlFlowGraph cfg = ControlFlowGraph::build(m.functions[0]);
  const DominatorTree pdom = DominatorTree::post_dominators(cfg);
  EXPECT_EQ(pdom.virtual_exit_edges(), (Blocks{2}));
  for (BlockId b = 0; b < cfg.size(); ++b) EXPECT_TRUE(pdom.contains(b)) << b;
  EXPECT_EQ(pdom.idom(0), cfg.exit());
}

TEST(Dominators, LeavesUnreachableBlocksOutOfTheDominatorTree) {
  Module m = parse_ok(kernel("bra.uni $END;\nadd.u32 %r1, %r1, 1;\n$END:\nret;"));
  const ControlFlowGraph cfg = ControlFlowGraph::build(m.functions[0]);
  const DominatorTree dom = DominatorTree::dominators(cfg);
  EXPECT_FALSE(dom.contains(1));
  EXPECT_FALSE(dom.dominates(1, 2));
  EXPECT_EQ(dom.idom(2), 0u);
}

TEST(Dominators, AgreeWithTheDefinitionOnTheCorpus) {
  // a dominates b exactly when b is unreachable from the entry once a is removed.
  Module m = parse_ok(testing::committed("mma_ldmatrix.sm80.ptx"));
  for (const Function& f : m.functions) {
    if (!f.has_body) continue;
    const ControlFlowGraph cfg = ControlFlowGraph::build(f);
    const DominatorTree dom = DominatorTree::dominators(cfg);
    for (BlockId a = 0; a < cfg.size(); ++a) {
      std::vector<uint8_t> seen(cfg.size(), 0);
      std::vector<BlockId> work;
      if (a != 0) {
        seen[0] = 1;
        work.push_back(0);
      }
      while (!work.empty()) {
        const BlockId x = work.back();
        work.pop_back();
        for (BlockId s : cfg.block(x).successors) {
          if (s != a && !seen[s]) {
            seen[s] = 1;
            work.push_back(s);
          }
        }
      }
      for (BlockId b = 0; b < cfg.size(); ++b) {
        if (!cfg.reachable(b)) continue;
        EXPECT_EQ(dom.dominates(a, b), a == b || !seen[b]) << f.name << " " << a << " " << b;
      }
    }
  }
}

}  // namespace
}  // namespace kiln::ptx
