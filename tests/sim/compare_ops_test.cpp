#include <gtest/gtest.h>

#include <bit>

#include "sim_test_util.h"

namespace kiln::sim::testing {
namespace {

class CompareOpsTest : public SimTest {};

uint64_t f(float v) { return std::bit_cast<uint32_t>(v); }
constexpr uint64_t kNaN = 0x7fc00000;

TEST_F(CompareOpsTest, SignedAndUnsignedComparisonsDiffer) {
  const char* lt_s = "setp.lt.s32 %p, %a, %b; selp.u32 %d, 1, 0, %p";
  const char* lt_u = "setp.lo.u32 %p, %a, %b; selp.u32 %d, 1, 0, %p";
  EXPECT_EQ(eval(lt_s, 32, 32, {0xffffffffu}, {1})[0], 1u);
  EXPECT_EQ(eval(lt_u, 32, 32, {0xffffffffu}, {1})[0], 0u);
  EXPECT_EQ(eval("setp.ge.s64 %p, %a, %b; selp.u32 %d, 1, 0, %p", 64, 32, {~0ull}, {0})[0], 0u);
}

TEST_F(CompareOpsTest, OrderedAndUnorderedFloatComparisons) {
  EXPECT_EQ(
      eval("setp.lt.f32 %p, %a, %b; selp.u32 %d, 1, 0, %p", 32, 32, {kNaN, f(1)}, {f(1), f(2)}),
      (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(
      eval("setp.ltu.f32 %p, %a, %b; selp.u32 %d, 1, 0, %p", 32, 32, {kNaN, f(3)}, {f(1), f(2)}),
      (std::vector<uint64_t>{1, 0}));
  EXPECT_EQ(
      eval("setp.nan.f32 %p, %a, %b; selp.u32 %d, 1, 0, %p", 32, 32, {kNaN, f(3)}, {f(1), f(2)}),
      (std::vector<uint64_t>{1, 0}));
  EXPECT_EQ(eval("setp.neu.f32 %p, %a, %b; selp.u32 %d, 1, 0, %p", 32, 32, {kNaN}, {kNaN})[0], 1u);
}

TEST_F(CompareOpsTest, PairDestinationAndBooleanCombination) {
  // p = (a < b) and s; q = !(a < b) and s, with s = (c != 0).
  const char* code =
      "setp.ne.u32 %s, %c, 0; setp.lt.u32.and %p|%q, %a, %b, %s; "
      "selp.u32 %d, 1, 0, %p; selp.u32 %t, 2, 0, %q; add.u32 %d, %d, %t";
  EXPECT_EQ(eval(code, 32, 32, {1, 5, 1}, {5, 1, 5}, {1, 1, 0}), (std::vector<uint64_t>{1, 2, 0}));
  EXPECT_EQ(
      eval("setp.eq.u32.or %p, %a, %b, !%s; selp.u32 %d, 1, 0, %p", 32, 32, {1, 1}, {2, 2}, {0, 0}),
      (std::vector<uint64_t>{1, 1}));
}

TEST_F(CompareOpsTest, SelpSlctAndSet) {
  EXPECT_EQ(
      eval("setp.gt.s32 %p, %a, 0; selp.b32 %d, %b, %c, %p", 32, 32, {1, 0}, {10, 10}, {20, 20}),
      (std::vector<uint64_t>{10, 20}));
  EXPECT_EQ(eval("slct.u32.s32 %d, %a, %b, %c", 32, 32, {1, 1}, {2, 2}, {0, 0x80000000u}),
            (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(eval("set.lt.u32.s32 %d, %a, %b", 32, 32, {1, 3}, {2, 2}),
            (std::vector<uint64_t>{0xffffffffu, 0}));
  EXPECT_EQ(eval("set.lt.f32.s32 %d, %a, %b", 32, 32, {1}, {2})[0], f(1.0f));
}

}  // namespace
}  // namespace kiln::sim::testing
