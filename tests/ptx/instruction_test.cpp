#include "kiln/ptx/instruction.h"

#include <gtest/gtest.h>

#include "ptx_test_support.h"

namespace kiln::ptx {
namespace {

using testing::kernel;
using testing::parse_ok;

TEST(Instruction, AnswersQuestionsAboutItsModifiers) {
  Module m =
      parse_ok(kernel("ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];\nld.f32 %f5, [%rd2];\n"
                      "cvt.rn.f16.f32 %r1, %f1;\nst.shared::cluster.u32 [%r2], %r3;"));
  const Function& f = m.functions[0];
  const Instruction& ld = f.instructions[0];
  EXPECT_TRUE(ld.has_modifier("nc"));
  EXPECT_FALSE(ld.has_modifier("f16"));
  EXPECT_EQ(ld.vector_width(), 4u);
  EXPECT_EQ(ld.type(), Type::F32);
  EXPECT_EQ(ld.state_space(), StateSpace::Global);
  EXPECT_EQ(f.instructions[1].state_space(), StateSpace::Generic);
  EXPECT_EQ(f.instructions[1].vector_width(), 1u);
  EXPECT_EQ(f.instructions[2].types, (std::vector<Type>{Type::F16, Type::F32}));
  EXPECT_EQ(f.instructions[3].state_space(), StateSpace::SharedCluster);
  EXPECT_EQ(ld.full_opcode(), "ld.global.nc.v4.f32");
}

TEST(Instruction, ClassifiesControlFlowMemoryAndBarriers) {
  Module m = parse_ok(
      kernel("$L0:\n@%p1 bra $L0;\nbar.sync 0;\nbar.warp.sync -1;\nbarrier.cluster.arrive;\n"
             "atom.global.add.u32 %r1, [%rd1], 1;\nred.global.add.u32 [%rd1], 1;\n"
             "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r5];\n"
             "stmatrix.sync.aligned.m8n8.x1.shared.b16 [%r5], {%r1};\n@%p2 exit;\ntrap;"));
  const Function& f = m.functions[0];
  EXPECT_TRUE(is_branch(f.instructions[0]));
  EXPECT_TRUE(is_terminator(f.instructions[0]));
  EXPECT_TRUE(is_barrier(f.instructions[1]));
  EXPECT_FALSE(is_barrier(f.instructions[2]));
  EXPECT_TRUE(is_barrier(f.instructions[3]));
  EXPECT_TRUE(is_atomic(f.instructions[4]));
  EXPECT_TRUE(is_atomic(f.instructions[5]));
  EXPECT_TRUE(is_load(f.instructions[6]));
  EXPECT_TRUE(is_store(f.instructions[7]));
  EXPECT_TRUE(ends_thread(f.instructions[8]));
  EXPECT_TRUE(ends_thread(f.instructions[9]));
  EXPECT_FALSE(is_call(f.instructions[9]));
}

}  // namespace
}  // namespace kiln::ptx
