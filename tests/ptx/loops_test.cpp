#include "kiln/ptx/loops.h"

#include <gtest/gtest.h>

#include "graphs.h"

namespace kiln::ptx {
namespace {

using testing::kernel;
using testing::parse_ok;
using Blocks = std::vector<BlockId>;

TEST(Loops, FindsASelfLoop) {
  Module m = parse_ok(testing::counted_loop());
  const ControlFlowGraph cfg = ControlFlowGraph::build(m.functions[0]);
  const LoopInfo loops = LoopInfo::compute(cfg, DominatorTree::dominators(cfg));
  ASSERT_EQ(loops.loops().size(), 1u);
  const Loop& l = loops.loops()[0];
  EXPECT_EQ(l.header, 1u);
  EXPECT_EQ(l.blocks, (Blocks{1}));
  EXPECT_EQ(l.latches, (Blocks{1}));
  EXPECT_EQ(l.exits, (Blocks{2}));
  EXPECT_EQ(loops.innermost(1), 0u);
  EXPECT_EQ(loops.innermost(0), kNone);
  EXPECT_EQ(loops.depth(1), 1u);
}

TEST(Loops, NestsLoopsAndFindsTheirExits) {
  Module m =
      parse_ok(kernel("mov.u32 %r1, 0;\n"                // B0
                      "$OUTER:\nmov.u32 %r2, 0;\n"       // B1
                      "$INNER:\nadd.u32 %r2, %r2, 1;\n"  // B2
                      "setp.lt.u32 %p1, %r2, 8;\n@%p1 bra $INNER;\n"
                      "add.u32 %r1, %r1, 1;\n"  // B3
                      "setp.lt.u32 %p2, %r1, 8;\n@%p2 bra $OUTER;\n"
                      "ret;"));  // B4
  const ControlFlowGraph cfg = ControlFlowGraph::build(m.functions[0]);
  const LoopInfo loops = LoopInfo::compute(cfg, DominatorTree::dominators(cfg));
  ASSERT_EQ(loops.loops().size(), 2u);
  const Loop& outer = loops.loops()[0];
  const Loop& inner = loops.loops()[1];
  EXPECT_EQ(outer.header, 1u);
  EXPECT_EQ(outer.blocks, (Blocks{1, 2, 3}));
  EXPECT_EQ(outer.exits, (Blocks{4}));
  EXPECT_EQ(outer.parent, kNone);
  EXPECT_EQ(inner.header, 2u);
  EXPECT_EQ(inner.blocks, (Blocks{2}));
  EXPECT_EQ(inner.exits, (Blocks{3}));
  EXPECT_EQ(inner.parent, 0u);
  EXPECT_EQ(inner.depth, 2u);
  EXPECT_EQ(loops.innermost(2), 1u);
  EXPECT_EQ(loops.innermost(3), 0u);
  EXPECT_EQ(loops.depth(2), 2u);
}

TEST(Loops, MergesBackEdgesToOneHeader) {
  Module m =
      parse_ok(kernel("$HEAD:\nadd.u32 %r1, %r1, 1;\n@%p1 bra $HEAD;\nadd.u32 %r2, %r2, 1;\n@%p2 "
                      "bra $HEAD;\nret;"));
  const ControlFlowGraph cfg = ControlFlowGraph::build(m.functions[0]);
  const LoopInfo loops = LoopInfo::compute(cfg, DominatorTree::dominators(cfg));
  ASSERT_EQ(loops.loops().size(), 1u);
  EXPECT_EQ(loops.loops()[0].latches, (Blocks{0, 1}));
}

TEST(Loops, FindsTheLoopsOfCompiledCode) {
  // loops.cu: triangle has three loops (thread-dependent, uniform, data-dependent); nested has
  // two nested loops.
  Module m = parse_ok(testing::committed("loops.sm80.ptx"));
  size_t max_depth = 0, total = 0;
  for (const Function& f : m.functions) {
    if (!f.has_body) continue;
    const ControlFlowGraph cfg = ControlFlowGraph::build(f);
    const LoopInfo loops = LoopInfo::compute(cfg, DominatorTree::dominators(cfg));
    total += loops.loops().size();
    for (const Loop& l : loops.loops()) max_depth = std::max<size_t>(max_depth, l.depth);
  }
  EXPECT_GE(total, 5u);
  EXPECT_EQ(max_depth, 2u);
}

}  // namespace
}  // namespace kiln::ptx
