#include <gtest/gtest.h>

#include "sim_test_util.h"

namespace kiln::sim::testing {
namespace {

class MoveOpsTest : public SimTest {};

TEST_F(MoveOpsTest, PackAndUnpackVectors) {
  EXPECT_EQ(eval("mov.b64 %d, {%a, %b}", 32, 64, {0x11111111}, {0x22222222})[0],
            0x2222222211111111ull);
  EXPECT_EQ(eval(".reg .b16 %h<2>; mov.b32 {%h0, %h1}, %a; mov.b32 %d, {%h1, %h0}", 32, 32,
                 {0xaaaabbbb})[0],
            0xbbbbaaaaull);
}

TEST_F(MoveOpsTest, CvtaMapsSharedAddressesToTheGenericWindowAndBack) {
  // The generic address differs from the shared one, and converting back recovers it.
  const char* code =
      "cvta.shared.u64 %rd9, %a; cvta.to.shared.u64 %rd10, %rd9; "
      "setp.ne.u64 %p, %rd9, %a; setp.eq.u64 %q, %rd10, %a; and.pred %p, %p, %q; "
      "selp.u64 %d, 1, 0, %p";
  EXPECT_EQ(eval(code, 64, 64, {128})[0], 1u);
  EXPECT_EQ(eval("cvta.to.global.u64 %d, %a", 64, 64, {0x7000000000ull})[0], 0x7000000000ull);
}

TEST_F(MoveOpsTest, ClockOnlyMovesForward) {
  const char* code =
      "mov.u64 %rd9, %clock64; add.u64 %d, %a, 1; mov.u64 %rd10, %clock64; "
      "setp.gt.u64 %p, %rd10, %rd9; selp.u64 %d, 1, 0, %p";
  EXPECT_EQ(eval(code, 64, 64, {0}), (std::vector<uint64_t>{1}));
}

TEST_F(MoveOpsTest, PredicateLogic) {
  const char* code =
      "setp.ne.u32 %p, %a, 0; setp.ne.u32 %q, %b, 0; xor.pred %s, %p, %q; not.pred %s, %s; "
      "selp.u32 %d, 1, 0, %s";
  EXPECT_EQ(eval(code, 32, 32, {0, 1, 0, 1}, {0, 0, 1, 1}), (std::vector<uint64_t>{1, 0, 0, 1}));
}

TEST_F(MoveOpsTest, ConstantPredicatesAndMapaEncodingTheTargetRank) {
  EXPECT_EQ(eval("mov.pred %p, 1; mov.pred %q, 0; selp.u32 %d, 1, 0, %p; selp.u32 %t, 2, 0, %q; "
                 "add.u32 %d, %d, %t",
                 32, 32, {0})[0],
            1u);
  // A shared::cluster address keeps the offset and carries rank + 1 above bit 24; the CTA's
  // own address (rank field 0) and a mapped one reach the same bytes (ControlTest covers that).
  EXPECT_EQ(eval("mapa.shared::cluster.u32 %d, %a, 1", 32, 32, {0x40})[0], (2u << 24) | 0x40u);
}

}  // namespace
}  // namespace kiln::sim::testing
