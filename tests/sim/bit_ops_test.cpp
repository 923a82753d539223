#include <gtest/gtest.h>

#include "sim_test_util.h"

namespace kiln::sim::testing {
namespace {

class BitOpsTest : public SimTest {};

TEST_F(BitOpsTest, PermuteLop3AndFunnelShift) {
  // prmt default mode: selector 0x5410 takes bytes 0,1 of a and 0,1 of b.
  EXPECT_EQ(eval("prmt.b32 %d, %a, %b, 0x5410", 32, 32, {0x33221100}, {0x77665544}),
            (std::vector<uint64_t>{0x55441100}));
  // selector nibble 8+i replicates the sign of byte i.
  EXPECT_EQ(eval("prmt.b32 %d, %a, %b, 0x8880", 32, 32, {0x000000f0}, {0}),
            (std::vector<uint64_t>{0xfffffff0u}));
  EXPECT_EQ(eval("prmt.b32.f4e %d, %a, %b, 1", 32, 32, {0x33221100}, {0x77665544}),
            (std::vector<uint64_t>{0x44332211}));
  // lop3 0x96 = a ^ b ^ c; 0xe8 = majority.
  EXPECT_EQ(eval("lop3.b32 %d, %a, %b, %c, 0x96", 32, 32, {0xf0}, {0xcc}, {0xaa}),
            (std::vector<uint64_t>{0xf0u ^ 0xccu ^ 0xaau}));
  EXPECT_EQ(eval("lop3.b32 %d, %a, %b, %c, 0xe8", 32, 32, {0xf0}, {0xcc}, {0xaa}),
            (std::vector<uint64_t>{(0xf0u & 0xccu) | (0xf0u & 0xaau) | (0xccu & 0xaau)}));
  EXPECT_EQ(eval("shf.l.wrap.b32 %d, %a, %b, %c", 32, 32, {0x80000000u}, {1}, {33}),
            (std::vector<uint64_t>{3}));
  EXPECT_EQ(eval("shf.r.clamp.b32 %d, %a, %b, %c", 32, 32, {0}, {0xabcd}, {40}),
            (std::vector<uint64_t>{0xabcd}));
}

}  // namespace
}  // namespace kiln::sim::testing
