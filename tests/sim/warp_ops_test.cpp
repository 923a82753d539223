#include <gtest/gtest.h>

#include <vector>

#include "sim_test_util.h"

namespace kiln::sim::testing {
namespace {

class WarpOpsTest : public SimTest {
 protected:
  std::vector<uint64_t> lanes(uint64_t scale = 1, uint64_t add = 0) {
    std::vector<uint64_t> v(32);
    for (uint64_t i = 0; i < 32; ++i) v[i] = i * scale + add;
    return v;
  }
};

TEST_F(WarpOpsTest, ShuffleDownUpBflyAndIdx) {
  std::vector<uint64_t> down = eval("shfl.sync.down.b32 %d, %a, 3, 31, -1", 32, 32, lanes(10));
  std::vector<uint64_t> up = eval("shfl.sync.up.b32 %d, %a, 2, 0, -1", 32, 32, lanes(10));
  std::vector<uint64_t> bfly = eval("shfl.sync.bfly.b32 %d, %a, 5, 31, -1", 32, 32, lanes(10));
  std::vector<uint64_t> idx = eval("shfl.sync.idx.b32 %d, %a, 7, 31, -1", 32, 32, lanes(10));
  for (uint32_t l = 0; l < 32; ++l) {
    EXPECT_EQ(down[l], (l + 3 <= 31 ? l + 3 : l) * 10) << l;
    EXPECT_EQ(up[l], (l >= 2 ? l - 2 : l) * 10) << l;
    EXPECT_EQ(bfly[l], (l ^ 5) * 10) << l;
    EXPECT_EQ(idx[l], 70u) << l;
  }
}

TEST_F(WarpOpsTest, ShuffleWidthSegmentsAndValidPredicate) {
  // __shfl_down_sync(mask, v, 1, 8): c = ((32 - 8) << 8) | 31.
  std::vector<uint64_t> got = eval(
      "shfl.sync.down.b32 %d|%p, %a, 1, 0x181f, -1; selp.u32 %t, 1000, 0, %p; add.u32 %d, %d, %t",
      32, 32, lanes());
  for (uint32_t l = 0; l < 32; ++l) {
    bool ok = (l % 8) != 7;
    EXPECT_EQ(got[l], (ok ? l + 1 : l) + (ok ? 1000u : 0u)) << l;
  }
  // __shfl_sync(mask, v, 2, 16): idx within 16-lane segments, c = ((32 - 16) << 8) | 31.
  std::vector<uint64_t> seg = eval("shfl.sync.idx.b32 %d, %a, 2, 0x101f, -1", 32, 32, lanes());
  for (uint32_t l = 0; l < 32; ++l) EXPECT_EQ(seg[l], (l & 16) + 2u) << l;
}

TEST_F(WarpOpsTest, VoteBallotAllAnyUni) {
  std::vector<uint64_t> in = lanes();
  EXPECT_EQ(eval("setp.lt.u32 %p, %a, 4; vote.sync.ballot.b32 %d, %p, -1", 32, 32, in)[0], 0xfu);
  EXPECT_EQ(eval("setp.lt.u32 %p, %a, 40; vote.sync.all.pred %q, %p, -1; selp.u32 %d, 1, 0, %q", 32,
                 32, in)[0],
            1u);
  EXPECT_EQ(eval("setp.eq.u32 %p, %a, 31; vote.sync.any.pred %q, !%p, -1; selp.u32 %d, 1, 0, %q",
                 32, 32, in)[5],
            1u);
  EXPECT_EQ(eval("setp.lt.u32 %p, %a, 4; vote.sync.uni.pred %q, %p, -1; selp.u32 %d, 1, 0, %q", 32,
                 32, in)[0],
            0u);
}

TEST_F(WarpOpsTest, ReduxMatchElectAndActivemask) {
  std::vector<uint64_t> in = lanes(3, 1);
  EXPECT_EQ(eval("redux.sync.add.u32 %d, %a, -1", 32, 32, in)[7], 3u * 496 + 32);
  EXPECT_EQ(eval("redux.sync.max.s32 %d, %a, -1", 32, 32, in)[0], 94u);
  EXPECT_EQ(eval("redux.sync.xor.b32 %d, %a, 0xff", 32, 32, in)[0],
            1u ^ 4 ^ 7 ^ 10 ^ 13 ^ 16 ^ 19 ^ 22);
  std::vector<uint64_t> parity(32);
  for (uint32_t i = 0; i < 32; ++i) parity[i] = i % 2;
  std::vector<uint64_t> m = eval("match.any.sync.b32 %d, %a, -1", 32, 32, parity);
  EXPECT_EQ(m[0], 0x55555555u);
  EXPECT_EQ(m[1], 0xaaaaaaaau);
  EXPECT_EQ(eval("match.all.sync.b32 %d|%p, %a, -1; selp.u32 %t, 1, 0, %p; add.u32 %d, %d, %t", 32,
                 32, std::vector<uint64_t>(32, 9))[3],
            0u + 0xffffffffu + 1u);
  std::vector<uint64_t> e = eval(
      "elect.sync %d|%p, 0xfffffff0; selp.u32 %t, 100, 0, %p; add.u32 %d, %d, %t", 32, 32, lanes());
  EXPECT_EQ(e[4], 104u);
  EXPECT_EQ(e[5], 4u);
}

}  // namespace
}  // namespace kiln::sim::testing
