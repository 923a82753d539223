#include <gtest/gtest.h>

#include "sim_test_util.h"

namespace kiln::sim::testing {
namespace {

class CarryOpsTest : public SimTest {};

TEST_F(CarryOpsTest, CarryChainsAddAndSubtractWideIntegers) {
  // A 64-bit add from two 32-bit halves: 0x00000001_ffffffff + 0x00000000_00000001.
  const char* add = "add.cc.u32 %t, %a, %b; addc.u32 %d, %c, 0";
  EXPECT_EQ(eval(add, 32, 32, {0xffffffffu, 5}, {1, 1}, {1, 1}), (std::vector<uint64_t>{2, 1}));
  // 0x1_00000000 - 1: the low word borrows from the high word.
  const char* sub = "sub.cc.u32 %t, %a, %b; subc.u32 %d, %c, 0";
  EXPECT_EQ(eval(sub, 32, 32, {0, 5}, {1, 1}, {1, 1}), (std::vector<uint64_t>{0, 1}));
  // mad.lo.cc then madc.hi: (2^32 - 1)^2 + (2^32 - 1) = 2^64 - 2^32 -> high word 0xffffffff.
  const char* mad = "mad.lo.cc.u32 %t, %a, %a, %a; madc.hi.u32 %d, %a, %a, 0";
  EXPECT_EQ(eval(mad, 32, 32, {0xffffffffu})[0], 0xffffffffu);
}

}  // namespace
}  // namespace kiln::sim::testing
