#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "sim_test_util.h"

namespace kiln::sim::testing {
namespace {

class WgmmaOpsTest : public SimTest {};

// One warpgroup copies a 16 KiB shared-memory image (built on the host) into shared memory,
// runs wgmma m64n16k16 f16 -> f32 with the two descriptors (offsets relative to the image),
// and stores each thread's 8 accumulator registers in order.
std::string wgmma_kernel(bool trans_b) {
  std::string text = R"(
.visible .entry k(.param .u64 image, .param .u64 out, .param .u64 da, .param .u64 db)
{
  .shared .align 1024 .b8 s[16384];
  .reg .b32 %r<24>;
  .reg .b64 %rd<12>;
  .reg .f32 %f<10>;
  .reg .pred %p<2>;
  mov.u32 %r1, %tid.x;
  ld.param.u64 %rd1, [image];
  mul.wide.u32 %rd2, %r1, 128;
  add.s64 %rd3, %rd1, %rd2;
  mov.u32 %r10, s;
  shl.b32 %r11, %r1, 7;
  add.u32 %r12, %r10, %r11;
  mov.u32 %r13, 0;
COPY:
  ld.global.v4.u32 {%r2, %r3, %r4, %r5}, [%rd3];
  st.shared.v4.u32 [%r12], {%r2, %r3, %r4, %r5};
  add.s64 %rd3, %rd3, 16;
  add.u32 %r12, %r12, 16;
  add.u32 %r13, %r13, 1;
  setp.lt.u32 %p1, %r13, 8;
  @%p1 bra COPY;
  bar.sync 0;
  ld.param.u64 %rd4, [da];
  ld.param.u64 %rd5, [db];
  cvt.u64.u32 %rd6, %r10;
  shr.u64 %rd6, %rd6, 4;
  add.s64 %rd4, %rd4, %rd6;
  add.s64 %rd5, %rd5, %rd6;
  mov.f32 %f1, 0f00000000;
  mov.f32 %f2, 0f00000000;
  mov.f32 %f3, 0f00000000;
  mov.f32 %f4, 0f00000000;
  mov.f32 %f5, 0f00000000;
  mov.f32 %f6, 0f00000000;
  mov.f32 %f7, 0f00000000;
  mov.f32 %f8, 0f00000000;
  setp.ne.u32 %p1, %r1, %r1;
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, %rd4, %rd5, %p1, 1, 1, 0, TRANS_B;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
  ld.param.u64 %rd7, [out];
  mul.wide.u32 %rd8, %r1, 32;
  add.s64 %rd9, %rd7, %rd8;
  st.global.v4.f32 [%rd9], {%f1, %f2, %f3, %f4};
  st.global.v4.f32 [%rd9+16], {%f5, %f6, %f7, %f8};
  ret;
}
)";
  text.replace(text.find("TRANS_B"), 7, trans_b ? "1" : "0");
  return text;
}

uint16_t half_of_small_int(int v) {  // exact f16 for |v| <= 8
  if (v == 0) return 0;
  int a = std::abs(v), e = 0;
  while ((1 << (e + 1)) <= a) ++e;
  uint16_t mantissa = static_cast<uint16_t>(((a << 10) >> e) & 0x3ff);
  return static_cast<uint16_t>((v < 0 ? 0x8000 : 0) | ((e + 15) << 10) | mantissa);
}

uint64_t descriptor(uint32_t start, uint32_t lbo, uint32_t sbo, uint32_t mode) {
  return (start >> 4) | (static_cast<uint64_t>(lbo >> 4) << 16) |
         (static_cast<uint64_t>(sbo >> 4) << 32) | (static_cast<uint64_t>(mode) << 62);
}

// Byte offset of element (row, k) of a K-major f16 matrix starting at `start`, per the PTX
// ISA's canonical layouts: 128B swizzle (rows of 128 bytes in 1024-byte groups of 8, 16-byte
// chunks XOR row % 8), or no swizzle (8 x 16-byte core matrices, LBO along K, SBO along rows).
uint32_t layout(bool swizzle128, uint32_t start, uint32_t row, uint32_t k) {
  if (swizzle128) {
    uint32_t logical = start + (row / 8) * 1024 + (row % 8) * 128 + k * 2;
    return logical ^ (((logical >> 7) & 7) << 4);
  }
  return start + (row / 8) * 256 + (k / 8) * 128 + (row % 8) * 16 + (k % 8) * 2;
}

// The same for an MN-major (N-contiguous) B: without swizzle, core matrices of 8 K-rows x 16
// bytes along N, SBO (128) apart along N and LBO (256) apart along K; with 128B swizzle, K-rows
// of 128 bytes along N, 8 per 1024-byte atom, atoms SBO (1024) apart along K.
uint32_t layout_mn(bool swizzle128, uint32_t start, uint32_t n, uint32_t k) {
  if (swizzle128) {
    uint32_t logical = start + (n % 64) * 2 + (k % 8) * 128 + (k / 8) * 1024;
    return logical ^ (((logical >> 7) & 7) << 4);
  }
  return start + (n % 8) * 2 + (n / 8) * 128 + (k % 8) * 16 + (k / 8) * 256;
}

void check(WgmmaOpsTest& t, bool swizzle128, bool trans_b = false) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> pick(-4, 4);
  int a[64][16], b[16][16];
  std::vector<uint8_t> image(16384, 0);
  for (uint32_t r = 0; r < 64; ++r) {
    for (uint32_t k = 0; k < 16; ++k) {
      a[r][k] = pick(rng);
      uint16_t h = half_of_small_int(a[r][k]);
      std::memcpy(&image[layout(swizzle128, 0, r, k)], &h, 2);
    }
  }
  for (uint32_t n = 0; n < 16; ++n) {
    for (uint32_t k = 0; k < 16; ++k) {
      b[n][k] = pick(rng);
      uint16_t h = half_of_small_int(b[n][k]);
      uint32_t at = trans_b ? layout_mn(swizzle128, 8192, n, k) : layout(swizzle128, 8192, n, k);
      std::memcpy(&image[at], &h, 2);
    }
  }
  uint64_t da = swizzle128 ? descriptor(0, 16, 1024, 1) : descriptor(0, 128, 256, 0);
  uint64_t db = swizzle128 ? descriptor(8192, 16, 1024, 1) : descriptor(8192, 128, 256, 0);
  if (trans_b && !swizzle128) db = descriptor(8192, 256, 128, 0);
  ModuleHandle m = t.load(ptx_module(wgmma_kernel(trans_b)));
  uint64_t out = t.zeros<float>(128 * 8);
  t.run(m, "k", {1}, {128}, Params().add(t.upload(image)).add(out).add(da).add(db));
  std::vector<float> got = t.download<float>(out, 128 * 8);
  for (uint32_t tid = 0; tid < 128; ++tid) {
    uint32_t warp = tid / 32, g = (tid % 32) / 4, q = tid % 4;
    for (uint32_t i = 0; i < 8; ++i) {
      // Accumulator fragment: register i holds row 16 warp + g + 8 ((i / 2) % 2), column
      // 8 (i / 4) + 2 q + i % 2.
      uint32_t row = 16 * warp + g + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * q + i % 2;
      int expect = 0;
      for (uint32_t k = 0; k < 16; ++k) expect += a[row][k] * b[col][k];
      EXPECT_EQ(got[tid * 8 + i], static_cast<float>(expect)) << "thread " << tid << " reg " << i;
    }
  }
}

TEST_F(WgmmaOpsTest, DescriptorsWith128ByteSwizzleGiveTheAccumulatorFragments) {
  check(*this, true);
}

TEST_F(WgmmaOpsTest, DescriptorsWithoutSwizzleUseCoreMatrices) { check(*this, false); }

TEST_F(WgmmaOpsTest, TransposedBReadsAnNMajorMatrix) {
  check(*this, false, true);
  check(*this, true, true);
}

}  // namespace
}  // namespace kiln::sim::testing
