#include "kiln/ptx/reaching_definitions.h"

#include <gtest/gtest.h>

#include "graphs.h"

namespace kiln::ptx {
namespace {

using testing::find;
using testing::kernel;
using testing::parse_ok;
using testing::reg;

std::vector<InstructionId> reaching_instructions(const ReachingDefinitions& rd, InstructionId at,
                                                 RegisterId r) {
  std::vector<InstructionId> out;
  for (DefinitionId d : rd.reaching(at, r)) out.push_back(rd.definitions()[d].instruction);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ReachingDefinitions, KillsEarlierWritesInStraightLineCode) {
  Module m = parse_ok(kernel("mov.u32 %r1, 1;\nmov.u32 %r1, 2;\nadd.u32 %r2, %r1, 1;"));
  const Function& f = m.functions[0];
  const ControlFlowGraph cfg = ControlFlowGraph::build(f);
  const ReachingDefinitions rd = ReachingDefinitions::compute(f, cfg);
  EXPECT_EQ(reaching_instructions(rd, 2, reg(f, "%r1")), (std::vector<InstructionId>{1}));
  EXPECT_FALSE(rd.may_be_undefined(2, reg(f, "%r1")));
  EXPECT_TRUE(rd.may_be_undefined(0, reg(f, "%r1")));
  EXPECT_EQ(rd.definitions_of(reg(f, "%r1")).size(), 2u);
}

TEST(ReachingDefinitions, MergesBothArmsAtAJoin) {
  Module m = parse_ok(testing::diamond());
  const Function& f = m.functions[0];
  const ControlFlowGraph cfg = ControlFlowGraph::build(f);
  const ReachingDefinitions rd = ReachingDefinitions::compute(f, cfg);
  const InstructionId store = find(f, "st.global");
  EXPECT_EQ(reaching_instructions(rd, store, reg(f, "%r2")), (std::vector<InstructionId>{3, 5}));
  EXPECT_FALSE(rd.may_be_undefined(store, reg(f, "%r2")));
}

TEST(ReachingDefinitions, LetsAGuardedWriteAddWithoutKilling) {
  Module m = parse_ok(kernel("mov.u32 %r1, 1;\n@%p1 mov.u32 %r1, 2;\nadd.u32 %r2, %r1, 1;"));
  const Function& f = m.functions[0];
  const ControlFlowGraph cfg = ControlFlowGraph::build(f);
  const ReachingDefinitions rd = ReachingDefinitions::compute(f, cfg);
  EXPECT_EQ(reaching_instructions(rd, 2, reg(f, "%r1")), (std::vector<InstructionId>{0, 1}));
  EXPECT_TRUE(rd.definitions()[rd.definitions_of(reg(f, "%r1"))[1]].conditional);
}

TEST(ReachingDefinitions, CarriesLoopValuesAroundTheBackEdge) {
  Module m = parse_ok(testing::counted_loop());
  const Function& f = m.functions[0];
  const ControlFlowGraph cfg = ControlFlowGraph::build(f);
  const ReachingDefinitions rd = ReachingDefinitions::compute(f, cfg);
  const InstructionId increment = find(f, "add.u32");
  // %r1 at the increment: the initial zero or the previous iteration's increment.
  EXPECT_EQ(reaching_instructions(rd, increment, reg(f, "%r1")),
            (std::vector<InstructionId>{1, increment}));
}

TEST(ReachingDefinitions, ReportsPathsThatLeaveARegisterUnwritten) {
  Module m = parse_ok(kernel("@%p1 bra $SKIP;\nmov.u32 %r1, 1;\n$SKIP:\nadd.u32 %r2, %r1, 1;"));
  const Function& f = m.functions[0];
  const ControlFlowGraph cfg = ControlFlowGraph::build(f);
  const ReachingDefinitions rd = ReachingDefinitions::compute(f, cfg);
  EXPECT_EQ(reaching_instructions(rd, 2, reg(f, "%r1")), (std::vector<InstructionId>{1}));
  EXPECT_TRUE(rd.may_be_undefined(2, reg(f, "%r1")));
}

TEST(ReachingDefinitions, CountsEveryElementOfAVectorDestination) {
  Module m = parse_ok(kernel("ld.global.v2.u32 {%r1, %r2}, [%rd1];\nadd.u32 %r3, %r1, %r2;"));
  const Function& f = m.functions[0];
  const ControlFlowGraph cfg = ControlFlowGraph::build(f);
  const ReachingDefinitions rd = ReachingDefinitions::compute(f, cfg);
  EXPECT_EQ(reaching_instructions(rd, 1, reg(f, "%r2")), (std::vector<InstructionId>{0}));
  EXPECT_EQ(rd.definitions().size(), 3u);
}

}  // namespace
}  // namespace kiln::ptx
