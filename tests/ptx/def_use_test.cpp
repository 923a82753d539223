#include "kiln/ptx/def_use.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "ptx_test_support.h"

namespace kiln::ptx {
namespace {

using testing::kernel;
using testing::parse_ok;

std::vector<std::string> names(const Function& f, const std::vector<RegisterId>& ids) {
  std::vector<std::string> out;
  for (RegisterId r : ids) out.push_back(f.registers[r].name);
  return out;
}

std::vector<std::string> defs(const Function& f, size_t i) {
  std::vector<RegisterId> out;
  append_defs(f.instructions[i], out);
  return names(f, out);
}

std::vector<std::string> uses(const Function& f, size_t i) {
  std::vector<RegisterId> out;
  append_uses(f.instructions[i], out);
  return names(f, out);
}

using V = std::vector<std::string>;

TEST(DefUse, ArithmeticWritesItsFirstOperandAndReadsTheRest) {
  Module m = parse_ok(kernel("@%p1 add.s32 %r1, %r2, %r3;"));
  const Function& f = m.functions[0];
  EXPECT_EQ(defs(f, 0), V{"%r1"});
  EXPECT_EQ(uses(f, 0), (V{"%p1", "%r2", "%r3"}));
}

TEST(DefUse, StoresWriteNoRegisterAndReadTheAddressBase) {
  Module m = parse_ok(kernel("st.global.v2.f32 [%rd1+8], {%f1, %f2};"));
  const Function& f = m.functions[0];
  EXPECT_FALSE(has_destination(f.instructions[0]));
  EXPECT_TRUE(defs(f, 0).empty());
  EXPECT_EQ(uses(f, 0), (V{"%rd1", "%f1", "%f2"}));
}

TEST(DefUse, VectorLoadsAndPairsWriteEveryElementButSinks) {
  Module m = parse_ok(
      kernel("ld.global.v4.u32 {%r1, _, %r3, %r4}, [%rd1];\nsetp.lt.u32 %p1|%p2, %r1, %r3;\n"
             "mov.b64 {%r5, %r6}, %rd2;"));
  const Function& f = m.functions[0];
  EXPECT_EQ(defs(f, 0), (V{"%r1", "%r3", "%r4"}));
  EXPECT_EQ(uses(f, 0), V{"%rd1"});
  EXPECT_EQ(defs(f, 1), (V{"%p1", "%p2"}));
  EXPECT_EQ(defs(f, 2), (V{"%r5", "%r6"}));
}

TEST(DefUse, BarriersAndIndirectBranchesReadTheirFirstOperand) {
  Module m = parse_ok(kernel(
      "bar.sync %r1, %r2;\nts: .branchtargets $L0;\nbrx.idx %r3, ts;\n$L0:\nnanosleep.u32 %r4;"));
  const Function& f = m.functions[0];
  EXPECT_TRUE(defs(f, 0).empty());
  EXPECT_EQ(uses(f, 0), (V{"%r1", "%r2"}));
  EXPECT_TRUE(defs(f, 1).empty());
  EXPECT_EQ(uses(f, 1), V{"%r3"});
  EXPECT_EQ(uses(f, 2), V{"%r4"});
}

TEST(DefUse, BarRedWritesItsReduction) {
  Module m =
      parse_ok(kernel("bar.red.popc.u32 %r1, 0, %p1;\nbarrier.cta.red.and.pred %p2, 1, %p1;"));
  const Function& f = m.functions[0];
  EXPECT_EQ(defs(f, 0), V{"%r1"});
  EXPECT_EQ(uses(f, 0), V{"%p1"});
  EXPECT_EQ(defs(f, 1), V{"%p2"});
}

TEST(DefUse, CallsWithRegisterReturnListsWriteThem) {
  Module m = parse_ok(std::string(testing::kHeader) + ".func (.reg .b32 rv) f(.reg .b32 a);\n" +
                      kernel("call.uni (%r1), f, (%r2);").substr(testing::kHeader.size()));
  const Function& f = *m.find_function("k");
  EXPECT_TRUE(call_returns_registers(f.instructions[0]));
  EXPECT_EQ(defs(f, 0), V{"%r1"});
  EXPECT_EQ(uses(f, 0), V{"%r2"});
}

TEST(DefUse, WgmmaReadsAndWritesItsAccumulators) {
  Module m =
      parse_ok(kernel("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, "
                      "%rd1, %rd2, %p1, 1, 1, 0, 0;"));
  const Function& f = m.functions[0];
  EXPECT_TRUE(reads_destination(f.instructions[0]));
  EXPECT_EQ(defs(f, 0), (V{"%f1", "%f2", "%f3", "%f4"}));
  EXPECT_EQ(uses(f, 0), (V{"%f1", "%f2", "%f3", "%f4", "%rd1", "%rd2", "%p1"}));
}

TEST(DefUse, MbarrierWritesItsStateOnlyWhenNotASink) {
  Module m =
      parse_ok(kernel("mbarrier.arrive.shared::cta.b64 %rd1, "
                      "[%r1];\nmbarrier.arrive.expect_tx.shared::cta.b64 _, [%r1], %r2;\n"
                      "mbarrier.init.shared::cta.b64 [%r1], "
                      "%r2;\nmbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r2;"));
  const Function& f = m.functions[0];
  EXPECT_EQ(defs(f, 0), V{"%rd1"});
  EXPECT_TRUE(defs(f, 1).empty());
  EXPECT_TRUE(defs(f, 2).empty());
  EXPECT_EQ(defs(f, 3), V{"%p1"});
}

TEST(DefUse, CallsReadIndirectTargetsButWriteNoRegister) {
  Module m =
      parse_ok(kernel("{\n.param .b32 param0;\n.param .b32 retval0;\n"
                      "proto : .callprototype (.param .b32 _) _ (.param .b32 _);\n"
                      "call (retval0), %rd1, (param0), proto;\n}"));
  const Function& f = m.functions[0];
  EXPECT_TRUE(defs(f, 0).empty());
  EXPECT_EQ(uses(f, 0), V{"%rd1"});
}

}  // namespace
}  // namespace kiln::ptx
