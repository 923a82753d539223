#include "kiln/ptx/cfg.h"

#include <gtest/gtest.h>

#include "graphs.h"

namespace kiln::ptx {
namespace {

using testing::kernel;
using testing::parse_ok;
using Blocks = std::vector<BlockId>;

TEST(Cfg, SplitsADiamondAtLabelsAndAfterBranches) {
  Module m = parse_ok(testing::diamond());
  const Function& f = m.functions[0];
  const ControlFlowGraph cfg = ControlFlowGraph::build(f);
  ASSERT_EQ(cfg.size(), 5u);
  EXPECT_EQ(cfg.block(0).first, 0u);
  EXPECT_EQ(cfg.block(0).last, 3u);
  EXPECT_EQ(cfg.block(0).successors, (Blocks{2, 1}));  // the label first, then fall-through
  EXPECT_EQ(cfg.block(1).successors, (Blocks{3}));
  EXPECT_EQ(cfg.block(2).successors, (Blocks{3}));
  EXPECT_EQ(cfg.block(3).predecessors, (Blocks{1, 2}));
  EXPECT_EQ(cfg.block(3).successors, (Blocks{cfg.exit()}));
  EXPECT_EQ(f.labels[cfg.block(2).label].name, "$THEN");
  EXPECT_EQ(cfg.block_of(5), 2u);
  EXPECT_EQ(cfg.terminator(0), 2u);
  EXPECT_EQ(cfg.terminator(2), kNone);
  EXPECT_TRUE(cfg.block(cfg.exit()).empty());
  EXPECT_EQ(cfg.reverse_post_order().front(), 0u);
  EXPECT_EQ(cfg.reverse_post_order().size(), 5u);
}

TEST(Cfg, GivesALoopABackEdge) {
  Module m = parse_ok(testing::counted_loop());
  const ControlFlowGraph cfg = ControlFlowGraph::build(m.functions[0]);
  ASSERT_EQ(cfg.size(), 4u);
  EXPECT_EQ(cfg.block(1).successors, (Blocks{1, 2}));
  EXPECT_EQ(cfg.block(1).predecessors, (Blocks{0, 1}));
}

TEST(Cfg, SendsRetExitAndTrapToTheExitBlock) {
  Module m = parse_ok(kernel("@%p1 ret;\n@%p2 exit;\nadd.u32 %r1, %r1, 1;\ntrap;"));
  const ControlFlowGraph cfg = ControlFlowGraph::build(m.functions[0]);
  ASSERT_EQ(cfg.size(), 4u);
  EXPECT_EQ(cfg.block(0).successors, (Blocks{3, 1}));
  EXPECT_EQ(cfg.block(1).successors, (Blocks{3, 2}));
  EXPECT_EQ(cfg.block(2).successors, (Blocks{3}));
}

TEST(Cfg, LeavesCodeAfterAnUnconditionalBranchUnreachable) {
  Module m = parse_ok(kernel("bra.uni $END;\nadd.u32 %r1, %r1, 1;\n$END:\nret;"));
  const ControlFlowGraph cfg = ControlFlowGraph::build(m.functions[0]);
  ASSERT_EQ(cfg.size(), 4u);
  EXPECT_EQ(cfg.block(0).successors, (Blocks{2}));
  EXPECT_TRUE(cfg.block(1).predecessors.empty());
  EXPECT_FALSE(cfg.reachable(1));
  EXPECT_TRUE(cfg.reachable(2));
}

TEST(Cfg, FollowsBranchTargetTables) {
  Module m = parse_ok(
      kernel("ts: .branchtargets $A, $B;\nbrx.idx %r1, ts;\n$A:\nret;\n$B:\nret;\n$C:\nret;"));
  const ControlFlowGraph cfg = ControlFlowGraph::build(m.functions[0]);
  EXPECT_EQ(cfg.block(0).successors, (Blocks{1, 2}));
  EXPECT_FALSE(cfg.has_conservative_edges());
}

TEST(Cfg, SendsAnUnresolvedIndirectBranchToEveryLabel) {
  Module m = parse_ok(kernel("brx.idx %r1, unknown_table;\n$A:\nret;\n$B:\nret;"));
  const ControlFlowGraph cfg = ControlFlowGraph::build(m.functions[0]);
  EXPECT_EQ(cfg.block(0).successors, (Blocks{1, 2}));
  EXPECT_TRUE(cfg.has_conservative_edges());
}

TEST(Cfg, KeepsInlineAsmLoopsInsideTheirScope) {
  const std::string wait =
      "{\n.reg .pred P1;\nWAIT:\nmbarrier.try_wait.parity.shared::cta.b64 P1, [%r1], %r2;\n"
      "@!P1 bra WAIT;\n}\n";
  Module m = parse_ok(kernel("mov.u32 %r1, 0;\n" + wait + wait + "ret;"));
  const ControlFlowGraph cfg = ControlFlowGraph::build(m.functions[0]);
  // entry | wait 1 (self loop) | wait 2 (self loop) | ret | exit
  ASSERT_EQ(cfg.size(), 5u);
  EXPECT_EQ(cfg.block(1).successors, (Blocks{1, 2}));
  EXPECT_EQ(cfg.block(2).successors, (Blocks{2, 3}));
}

TEST(Cfg, GivesALabelAtTheEndItsOwnEmptyBlock) {
  Module m = parse_ok(kernel("@%p1 bra $END;\nadd.u32 %r1, %r1, 1;\n$END:"));
  const ControlFlowGraph cfg = ControlFlowGraph::build(m.functions[0]);
  ASSERT_EQ(cfg.size(), 4u);
  EXPECT_TRUE(cfg.block(2).empty());
  EXPECT_EQ(cfg.block(0).successors, (Blocks{2, 1}));
  EXPECT_EQ(cfg.block(2).successors, (Blocks{3}));
}

TEST(Cfg, HandlesAnEmptyBody) {
  Module m = parse_ok(kernel(""));
  const ControlFlowGraph cfg = ControlFlowGraph::build(m.functions[0]);
  ASSERT_EQ(cfg.size(), 2u);
  EXPECT_EQ(cfg.block(0).successors, (Blocks{1}));
}

TEST(Cfg, PutsEveryCorpusInstructionInExactlyOneBlock) {
  Module m = parse_ok(testing::committed("calls.sm80.ptx"));
  for (const Function& f : m.functions) {
    if (!f.has_body) continue;
    const ControlFlowGraph cfg = ControlFlowGraph::build(f);
    InstructionId next = 0;
    for (BlockId b = 0; b + 1 < cfg.size(); ++b) {
      EXPECT_EQ(cfg.block(b).first, next) << f.name;
      next = cfg.block(b).last;
      for (InstructionId i = cfg.block(b).first; i < cfg.block(b).last; ++i) {
        EXPECT_EQ(cfg.block_of(i), b);
        if (i + 1 < cfg.block(b).last) {
          EXPECT_FALSE(is_terminator(f.instructions[i]));
        }
      }
      for (BlockId s : cfg.block(b).successors) {
        const Blocks& preds = cfg.block(s).predecessors;
        EXPECT_NE(std::find(preds.begin(), preds.end(), b), preds.end());
      }
    }
    EXPECT_EQ(next, f.instructions.size()) << f.name;
  }
}

}  // namespace
}  // namespace kiln::ptx
