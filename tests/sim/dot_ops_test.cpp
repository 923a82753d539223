#include <gtest/gtest.h>

#include "sim_test_util.h"

namespace kiln::sim::testing {
namespace {

class DotOpsTest : public SimTest {};

TEST_F(DotOpsTest, DotProductsOfBytes) {
  // dp4a.s32.s32: (-1)(2) + (2)(3) + (3)(-4) + (4)(5) + 100 = 112.
  EXPECT_EQ(eval("dp4a.s32.s32 %d, %a, %b, %c", 32, 32, {0x040302ffu}, {0x05fc0302u}, {100})[0],
            112u);
  EXPECT_EQ(eval("dp4a.u32.u32 %d, %a, %b, %c", 32, 32, {0x040302ffu}, {0x01010101u}, {0})[0],
            255u + 2 + 3 + 4);
  // dp2a.lo.s32.s32: halves of a (-2, 3) times bytes 0,1 of b (10, 20) = 40.
  EXPECT_EQ(eval("dp2a.lo.s32.s32 %d, %a, %b, %c", 32, 32, {0x0003fffeu}, {0x0000140au}, {0})[0],
            40u);
}

}  // namespace
}  // namespace kiln::sim::testing
