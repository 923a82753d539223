#include <gtest/gtest.h>

#include <cstring>

#include "kiln/sim/tensor_map.h"
#include "sim_test_util.h"

namespace kiln::sim::testing {
namespace {

class BulkCopyOpsTest : public SimTest {};

struct alignas(64) MapBytes {
  unsigned char bytes[kTensorMapBytes];
};

// Thread 0 loads one box through the tensor map (a __grid_constant__ parameter) into shared
// memory, completing `box_bytes` transaction bytes on an mbarrier; every thread waits on
// phase 0 and then copies shared memory word by word to `out`.
std::string tensor_kernel(uint32_t box_bytes) {
  return ptx_module(R"(
.visible .entry k(.param .align 64 .b8 map[128], .param .u64 out, .param .u32 x, .param .u32 y)
{
  .shared .align 1024 .b8 smem[4096];
  .shared .align 8 .b64 bar;
  .reg .b32 %r<16>;
  .reg .b64 %rd<12>;
  .reg .pred %p<4>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, bar;
  mov.u32 %r3, smem;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra WAIT;
  mbarrier.init.shared.b64 [%r2], 1;
  mbarrier.arrive.expect_tx.shared.b64 %rd1, [%r2], )" +
                    std::to_string(box_bytes) + R"(;
  mov.u64 %rd2, map;
  cvta.param.u64 %rd3, %rd2;
  ld.param.u32 %r4, [x];
  ld.param.u32 %r5, [y];
  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r3], [%rd3, {%r4, %r5}], [%r2];
WAIT:
  bar.sync 0;
SPIN:
  mbarrier.try_wait.parity.shared.b64 %p2, [%r2], 0;
  @!%p2 bra SPIN;
  ld.param.u64 %rd4, [out];
  mov.u32 %r6, %r1;
COPY:
  shl.b32 %r7, %r6, 2;
  add.u32 %r8, %r3, %r7;
  ld.shared.u32 %r9, [%r8];
  mul.wide.u32 %rd5, %r6, 4;
  add.s64 %rd6, %rd4, %rd5;
  st.global.u32 [%rd6], %r9;
  add.u32 %r6, %r6, 32;
  setp.lt.u32 %p3, %r6, )" +
                    std::to_string(box_bytes / 4) + R"(;
  @%p3 bra COPY;
  ret;
}
)");
}

MapBytes make_map(uint64_t address, uint64_t w, uint64_t h, uint32_t bw, uint32_t bh,
                  uint32_t swizzle) {
  TensorMapDesc d;
  d.rank = 2;
  d.data_type = 4;  // CU_TENSOR_MAP_DATA_TYPE_UINT32
  d.element_bytes = 4;
  d.global_address = address;
  d.global_dim[0] = w;
  d.global_dim[1] = h;
  d.global_stride_bytes[0] = 4;
  d.global_stride_bytes[1] = w * 4;
  d.box_dim[0] = bw;
  d.box_dim[1] = bh;
  d.element_strides[0] = d.element_strides[1] = 1;
  d.swizzle = swizzle;
  MapBytes m;
  encode_tensor_map(d, m.bytes);
  return m;
}

TEST_F(BulkCopyOpsTest, TensorLoadCopiesTheBoxAndZeroFillsOutOfBounds) {
  const uint32_t w = 10, h = 6;
  std::vector<uint32_t> g(w * h);
  for (uint32_t i = 0; i < g.size(); ++i) g[i] = 100 + i;
  uint64_t pg = upload(g);
  ModuleHandle m = load(tensor_kernel(8 * 4 * 4));
  uint64_t out = zeros<uint32_t>(32);
  MapBytes map = make_map(pg, w, h, 8, 4, 0);
  run(m, "k", {1}, {32}, Params().add(map).add(out).add(uint32_t{4}).add(uint32_t{3}));
  std::vector<uint32_t> got = download<uint32_t>(out, 32);
  for (uint32_t r = 0; r < 4; ++r) {
    for (uint32_t c = 0; c < 8; ++c) {
      uint32_t x = 4 + c, y = 3 + r;
      uint32_t expect = x < w && y < h ? 100 + y * w + x : 0;
      EXPECT_EQ(got[r * 8 + c], expect) << r << "," << c;
    }
  }
}

TEST_F(BulkCopyOpsTest, TensorLoadApplies128ByteSwizzle) {
  const uint32_t w = 32, h = 8;
  std::vector<uint32_t> g(w * h);
  for (uint32_t i = 0; i < g.size(); ++i) g[i] = i;
  uint64_t pg = upload(g);
  ModuleHandle m = load(tensor_kernel(1024));
  uint64_t out = zeros<uint32_t>(256);
  MapBytes map = make_map(pg, w, h, 32, 8, 3);
  run(m, "k", {1}, {32}, Params().add(map).add(out).add(uint32_t{0}).add(uint32_t{0}));
  std::vector<uint32_t> got = download<uint32_t>(out, 256);
  // Row r (128 bytes) has its 16-byte chunks permuted: chunk c lands at chunk c ^ (r % 8).
  for (uint32_t r = 0; r < 8; ++r) {
    for (uint32_t c = 0; c < 32; ++c) {
      uint32_t chunk = c / 4, within = c % 4;
      uint32_t at = r * 32 + ((chunk ^ r) * 4) + within;
      EXPECT_EQ(got[at], r * 32 + c) << r << "," << c;
    }
  }
}

// A cluster of two CTAs: each initializes its mbarrier (expecting the box's bytes), the cluster
// synchronizes, CTA rank 0 multicasts one box to both, and every thread copies its CTA's box.
TEST_F(BulkCopyOpsTest, MulticastTensorLoadFillsEveryCtaOfTheMask) {
  ModuleHandle m = load(ptx_module(R"(
.visible .entry k(.param .align 64 .b8 map[128], .param .u64 out)
{
  .shared .align 1024 .b8 smem[1024];
  .shared .align 8 .b64 bar;
  .reg .b32 %r<16>;
  .reg .b64 %rd<12>;
  .reg .b16 %h<2>;
  .reg .pred %p<4>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, bar;
  mov.u32 %r3, smem;
  mov.u32 %r4, %cluster_ctarank;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra READY;
  mbarrier.init.shared.b64 [%r2], 1;
  mbarrier.arrive.expect_tx.shared.b64 %rd1, [%r2], 128;
READY:
  barrier.cluster.arrive;
  barrier.cluster.wait;
  or.b32 %r5, %r1, %r4;
  setp.ne.u32 %p2, %r5, 0;
  @%p2 bra WAIT;
  mov.u64 %rd2, map;
  cvta.param.u64 %rd3, %rd2;
  mov.u32 %r6, 0;
  mov.u16 %h1, 3;
  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%r3], [%rd3, {%r6, %r6}], [%r2], %h1;
WAIT:
  mbarrier.try_wait.parity.shared.b64 %p3, [%r2], 0;
  @!%p3 bra WAIT;
  shl.b32 %r7, %r1, 2;
  add.u32 %r8, %r3, %r7;
  ld.shared.u32 %r9, [%r8];
  mov.u32 %r10, %ctaid.x;
  mad.lo.u32 %r11, %r10, 32, %r1;
  ld.param.u64 %rd4, [out];
  mul.wide.u32 %rd5, %r11, 4;
  add.s64 %rd6, %rd4, %rd5;
  st.global.u32 [%rd6], %r9;
  ret;
}
)"));
  std::vector<uint32_t> g(8 * 4);
  for (uint32_t i = 0; i < g.size(); ++i) g[i] = 500 + i;
  uint64_t pg = upload(g);
  MapBytes map = make_map(pg, 8, 4, 8, 4, 0);
  uint64_t out = zeros<uint32_t>(64);
  LaunchConfig config;
  config.grid = {2};
  config.block = {32};
  config.cluster = {2, 1, 1};
  Params p;
  p.add(map).add(out);
  Result<LaunchReport> r = device_.launch(m, "k", config, p.bytes());
  ASSERT_TRUE(r.ok());
  for (const LaunchFault& f : r->faults) ADD_FAILURE() << f.kind << ": " << f.message;
  std::vector<uint32_t> got = download<uint32_t>(out, 64);
  for (uint32_t i = 0; i < 64; ++i) EXPECT_EQ(got[i], 500 + i % 32) << i;
}

TEST_F(BulkCopyOpsTest, BulkCopyCompletesTransactionBytes) {
  ModuleHandle m = load(ptx_module(R"(
.visible .entry k(.param .u64 in, .param .u64 out)
{
  .shared .align 128 .b8 smem[256];
  .shared .align 8 .b64 bar;
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .pred %p<3>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, bar;
  mov.u32 %r3, smem;
  ld.param.u64 %rd1, [in];
  elect.sync %r4|%p1, -1;
  @!%p1 bra WAIT;
  mbarrier.init.shared.b64 [%r2], 1;
  mbarrier.arrive.expect_tx.shared.b64 %rd2, [%r2], 256;
  mov.u32 %r5, 256;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd1], %r5, [%r2];
WAIT:
  bar.sync 0;
SPIN:
  mbarrier.try_wait.parity.shared.b64 %p2, [%r2], 0;
  @!%p2 bra SPIN;
  shl.b32 %r6, %r1, 3;
  add.u32 %r7, %r3, %r6;
  ld.shared.u64 %rd3, [%r7];
  ld.param.u64 %rd4, [out];
  mul.wide.u32 %rd5, %r1, 8;
  add.s64 %rd6, %rd4, %rd5;
  st.global.u64 [%rd6], %rd3;
  ret;
}
)"));
  std::vector<uint64_t> in(32);
  for (uint64_t i = 0; i < 32; ++i) in[i] = i * i + 7;
  uint64_t out = zeros<uint64_t>(32);
  run(m, "k", {1}, {32}, Params().add(upload(in)).add(out));
  EXPECT_EQ(download<uint64_t>(out, 32), in);
}

}  // namespace
}  // namespace kiln::sim::testing
