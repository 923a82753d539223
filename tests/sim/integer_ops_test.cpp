#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "sim_test_util.h"

namespace kiln::sim::testing {
namespace {

class IntegerOpsTest : public SimTest {};

uint64_t u32(int64_t v) { return static_cast<uint32_t>(v); }

TEST_F(IntegerOpsTest, AddSubWrapAndSaturate) {
  EXPECT_EQ(eval("add.u32 %d, %a, %b", 32, 32, {0xffffffffu, 5}, {2, 7}),
            (std::vector<uint64_t>{1, 12}));
  EXPECT_EQ(eval("sub.s32 %d, %a, %b", 32, 32, {3}, {5}), (std::vector<uint64_t>{u32(-2)}));
  EXPECT_EQ(
      eval("add.sat.s32 %d, %a, %b", 32, 32, {0x7ffffff0u, u32(-5)}, {0x100, u32(-0x7fffffff)}),
      (std::vector<uint64_t>{0x7fffffffu, 0x80000000u}));
  EXPECT_EQ(eval("add.s64 %d, %a, %b", 64, 64, {~0ull}, {2}), (std::vector<uint64_t>{1}));
  EXPECT_EQ(eval("sub.u16 %d, %a, %b", 16, 16, {1}, {2}), (std::vector<uint64_t>{0xffff}));
}

TEST_F(IntegerOpsTest, MultiplyLowHighAndWide) {
  EXPECT_EQ(eval("mul.lo.u32 %d, %a, %b", 32, 32, {0x10001}, {0x10001}),
            (std::vector<uint64_t>{0x20001}));
  EXPECT_EQ(eval("mul.hi.u32 %d, %a, %b", 32, 32, {0x80000000u}, {6}), (std::vector<uint64_t>{3}));
  EXPECT_EQ(eval("mul.hi.s32 %d, %a, %b", 32, 32, {u32(-2)}, {0x80000000u}),
            (std::vector<uint64_t>{1}));
  EXPECT_EQ(eval("mul.wide.s32 %d, %a, %b", 32, 64, {u32(-3)}, {100000}),
            (std::vector<uint64_t>{static_cast<uint64_t>(-300000)}));
  EXPECT_EQ(eval("mul.wide.u32 %d, %a, %b", 32, 64, {0xffffffffu}, {0xffffffffu}),
            (std::vector<uint64_t>{0xfffffffe00000001ull}));
  EXPECT_EQ(eval("mul.hi.u64 %d, %a, %b", 64, 64, {1ull << 63}, {6}), (std::vector<uint64_t>{3}));
  EXPECT_EQ(eval("mad.lo.s32 %d, %a, %b, %c", 32, 32, {7}, {u32(-3)}, {50}),
            (std::vector<uint64_t>{29}));
  EXPECT_EQ(eval("mul24.lo.u32 %d, %a, %b", 32, 32, {0x1000003}, {2}), (std::vector<uint64_t>{6}));
}

TEST_F(IntegerOpsTest, DivisionAndRemainderFollowCSemantics) {
  EXPECT_EQ(eval("div.s32 %d, %a, %b", 32, 32, {u32(-7), 7}, {2, u32(-2)}),
            (std::vector<uint64_t>{u32(-3), u32(-3)}));
  EXPECT_EQ(eval("rem.s32 %d, %a, %b", 32, 32, {u32(-7), 7}, {2, u32(-2)}),
            (std::vector<uint64_t>{u32(-1), 1}));
  EXPECT_EQ(eval("div.u64 %d, %a, %b", 64, 64, {1000000000000ull}, {7}),
            (std::vector<uint64_t>{142857142857ull}));
  EXPECT_EQ(eval("div.u32 %d, %a, %b", 32, 32, {5}, {0}), (std::vector<uint64_t>{0xffffffffu}));
}

TEST_F(IntegerOpsTest, AbsNegMinMax) {
  EXPECT_EQ(eval("abs.s32 %d, %a", 32, 32, {u32(-9), 4}), (std::vector<uint64_t>{9, 4}));
  EXPECT_EQ(eval("neg.s64 %d, %a", 64, 64, {5}),
            (std::vector<uint64_t>{static_cast<uint64_t>(-5)}));
  EXPECT_EQ(eval("min.s32 %d, %a, %b", 32, 32, {u32(-1)}, {3}), (std::vector<uint64_t>{u32(-1)}));
  EXPECT_EQ(eval("min.u32 %d, %a, %b", 32, 32, {u32(-1)}, {3}), (std::vector<uint64_t>{3}));
  EXPECT_EQ(eval("max.s16 %d, %a, %b", 16, 16, {0xffff}, {2}), (std::vector<uint64_t>{2}));
}

TEST_F(IntegerOpsTest, LogicAndShifts) {
  EXPECT_EQ(eval("and.b32 %d, %a, %b", 32, 32, {0xf0f0}, {0xff00}),
            (std::vector<uint64_t>{0xf000}));
  EXPECT_EQ(eval("xor.b64 %d, %a, %b", 64, 64, {~0ull}, {1}), (std::vector<uint64_t>{~1ull}));
  EXPECT_EQ(eval("not.b16 %d, %a", 16, 16, {0x00ff}), (std::vector<uint64_t>{0xff00}));
  EXPECT_EQ(eval("cnot.b32 %d, %a", 32, 32, {0, 5}), (std::vector<uint64_t>{1, 0}));
  EXPECT_EQ(eval("shl.b32 %d, %a, %b", 32, 32, {1, 1}, {31, 40}),
            (std::vector<uint64_t>{0x80000000u, 0}));
  EXPECT_EQ(eval("shr.s32 %d, %a, %b", 32, 32, {0x80000000u, 0x80000000u}, {4, 99}),
            (std::vector<uint64_t>{0xf8000000u, 0xffffffffu}));
  EXPECT_EQ(eval("shr.u32 %d, %a, %b", 32, 32, {0x80000000u}, {4}),
            (std::vector<uint64_t>{0x08000000u}));
  EXPECT_EQ(eval("shr.s64 %d, %a, 63", 64, 64, {1ull << 63}), (std::vector<uint64_t>{~0ull}));
}

TEST_F(IntegerOpsTest, BitFieldsAndCounts) {
  // bfe.u32: bits 4..11 of 0xabcd -> 0xbc; bfe.s32 sign-extends from the field's top bit.
  EXPECT_EQ(eval("bfe.u32 %d, %a, 4, 8", 32, 32, {0xabcd}), (std::vector<uint64_t>{0xbc}));
  EXPECT_EQ(eval("bfe.s32 %d, %a, 4, 8", 32, 32, {0xabcd}), (std::vector<uint64_t>{0xffffffbcu}));
  EXPECT_EQ(eval("bfi.b32 %d, %a, %b, 8, 4", 32, 32, {0x5}, {0xffffffffu}),
            (std::vector<uint64_t>{0xfffff5ffu}));
  EXPECT_EQ(eval("popc.b64 %d, %a", 64, 32, {0xff00ff00ff00ffull}), (std::vector<uint64_t>{32}));
  EXPECT_EQ(eval("clz.b32 %d, %a", 32, 32, {1, 0}), (std::vector<uint64_t>{31, 32}));
  EXPECT_EQ(eval("brev.b32 %d, %a", 32, 32, {1}), (std::vector<uint64_t>{0x80000000u}));
  EXPECT_EQ(eval("bfind.u32 %d, %a", 32, 32, {0x100, 0}), (std::vector<uint64_t>{8, 0xffffffffu}));
  EXPECT_EQ(eval("bfind.shiftamt.u32 %d, %a", 32, 32, {0x100}), (std::vector<uint64_t>{23}));
}

TEST_F(IntegerOpsTest, SumOfAbsoluteDifferences) {
  EXPECT_EQ(eval("sad.u32 %d, %a, %b, %c", 32, 32, {3}, {10}, {100}), (std::vector<uint64_t>{107}));
}

}  // namespace
}  // namespace kiln::sim::testing
