#include <gtest/gtest.h>

#include <bit>
#include <climits>
#include <cmath>
#include <cstdio>
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

// 8-bit inputs (fp8 in any mix, s8/u8 in any mix): m64n16k32 with 128B-swizzled K-major tiles
// (32 bytes of K per row, like the f16 tiles above); accumulators start at `init` (bits) with
// scale-d `accumulate`.
std::string wgmma8_kernel(const std::string& shape_types, bool integer, uint32_t init,
                          bool accumulate) {
  std::string text = wgmma_kernel(false);
  const std::string from = "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16";
  const size_t at = text.find(from);
  const size_t end = text.find(";", at);
  std::string regs = "{%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}";
  text.replace(at, end - at,
               "wgmma.mma_async.sync.aligned." + shape_types + " " + regs + ", %rd4, %rd5, %p1" +
                   (integer ? "" : ", 1, 1"));
  for (int i = 1; i <= 8; ++i) {
    const std::string zero = "mov.f32 %f" + std::to_string(i) + ", 0f00000000;";
    char init_text[64];
    std::snprintf(init_text, sizeof init_text, "mov.b32 %%f%d, 0x%08x;", i, init);
    text.replace(text.find(zero), zero.size(), init_text);
  }
  if (accumulate) text.replace(text.find("setp.ne.u32 %p1"), 15, "setp.eq.u32 %p1");
  if (integer) {  // s32 accumulators in .s32 registers, stored as bits
    text.replace(text.find(".reg .f32 %f<10>"), 16, ".reg .s32 %f<10>");
    for (size_t p = text.find("st.global.v4.f32"); p != std::string::npos;
         p = text.find("st.global.v4.f32"))
      text.replace(p, 16, "st.global.v4.b32");
  }
  return text;
}

// Runs wgmma8_kernel on A (64x32) and B (16x32) byte matrices and returns each thread's 8
// accumulators (bits) with the row and column they hold.
std::vector<uint32_t> run_wgmma8(WgmmaOpsTest& t, const std::string& shape_types, bool integer,
                                 uint32_t init, bool accumulate, const uint8_t (&a)[64][32],
                                 const uint8_t (&b)[16][32]) {
  std::vector<uint8_t> image(16384, 0);
  const auto at = [](uint32_t start, uint32_t row, uint32_t kbyte) {
    const uint32_t logical = start + (row / 8) * 1024 + (row % 8) * 128 + kbyte;
    return logical ^ (((logical >> 7) & 7) << 4);
  };
  for (uint32_t r = 0; r < 64; ++r)
    for (uint32_t k = 0; k < 32; ++k) image[at(0, r, k)] = a[r][k];
  for (uint32_t n = 0; n < 16; ++n)
    for (uint32_t k = 0; k < 32; ++k) image[at(8192, n, k)] = b[n][k];
  ModuleHandle m = t.load(ptx_module(wgmma8_kernel(shape_types, integer, init, accumulate)));
  uint64_t out = t.zeros<uint32_t>(128 * 8);
  t.run(m, "k", {1}, {128},
        Params()
            .add(t.upload(image))
            .add(out)
            .add(descriptor(0, 16, 1024, 1))
            .add(descriptor(8192, 16, 1024, 1)));
  return t.download<uint32_t>(out, 128 * 8);
}

// Row and column of accumulator register i of thread tid (m64nNk*, f32/s32 accumulators).
std::pair<uint32_t, uint32_t> accumulator_at(uint32_t tid, uint32_t i) {
  const uint32_t warp = tid / 32, g = (tid % 32) / 4, q = tid % 4;
  return {16 * warp + g + 8 * ((i / 2) % 2), 8 * (i / 4) + 2 * q + i % 2};
}

TEST_F(WgmmaOpsTest, MixedFp8InputsDecodeEachOperandInItsOwnFormat) {
  // e5m2 A and e4m3 B, values exact in both: 0, +-0.5, +-1, 2 (e5m2: 0x38 0x3c 0x40;
  // e4m3: 0x30 0x38 0x40; sign bit 0x80).
  const uint8_t e5m2[] = {0x00, 0x38, 0xb8, 0x3c, 0xbc, 0x40};
  const uint8_t e4m3[] = {0x00, 0x30, 0xb0, 0x38, 0xb8, 0x40};
  const double value[] = {0, 0.5, -0.5, 1, -1, 2};
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> pick(0, 5);
  uint8_t a[64][32], b[16][32];
  double av[64][32], bv[16][32];
  for (uint32_t r = 0; r < 64; ++r)
    for (uint32_t k = 0; k < 32; ++k) {
      const int v = pick(rng);
      a[r][k] = e5m2[v];
      av[r][k] = value[v];
    }
  for (uint32_t n = 0; n < 16; ++n)
    for (uint32_t k = 0; k < 32; ++k) {
      const int v = pick(rng);
      b[n][k] = e4m3[v];
      bv[n][k] = value[v];
    }
  const std::vector<uint32_t> got =
      run_wgmma8(*this, "m64n16k32.f32.e5m2.e4m3", false, 0x3f800000, true, a, b);
  for (uint32_t tid = 0; tid < 128; ++tid) {
    for (uint32_t i = 0; i < 8; ++i) {
      const auto [row, col] = accumulator_at(tid, i);
      double expect = 1.0;  // the accumulator's start
      for (uint32_t k = 0; k < 32; ++k) expect += av[row][k] * bv[col][k];
      EXPECT_EQ(std::bit_cast<float>(got[tid * 8 + i]), static_cast<float>(expect))
          << "thread " << tid << " reg " << i;
    }
  }
}

TEST_F(WgmmaOpsTest, IntegerInputsAccumulateInS32WrappedOrSaturated) {
  std::mt19937 rng(12);
  std::uniform_int_distribution<int> byte(0, 255);
  uint8_t a[64][32], b[16][32];
  for (auto& row : a)
    for (auto& v : row) v = static_cast<uint8_t>(byte(rng));
  for (auto& row : b)
    for (auto& v : row) v = static_cast<uint8_t>(byte(rng));
  const auto expected = [&](uint32_t row, uint32_t col, bool a_signed, int64_t start) {
    int64_t sum = start;
    for (uint32_t k = 0; k < 32; ++k) {
      const int64_t x = a_signed ? static_cast<int8_t>(a[row][k]) : a[row][k];
      sum += x * b[col][k];
    }
    return sum;
  };
  // s8 x u8 from zero (scale-d 0): exact sums.
  std::vector<uint32_t> got = run_wgmma8(*this, "m64n16k32.s32.s8.u8", true, 0, false, a, b);
  for (uint32_t tid = 0; tid < 128; ++tid)
    for (uint32_t i = 0; i < 8; ++i) {
      const auto [row, col] = accumulator_at(tid, i);
      EXPECT_EQ(static_cast<int32_t>(got[tid * 8 + i]), expected(row, col, true, 0));
    }
  // u8 x u8 added to accumulators near INT32_MAX: .satfinite clamps, plain wraps.
  const int64_t start = INT32_MAX - 1000;
  for (bool saturate : {true, false}) {
    got = run_wgmma8(*this, saturate ? "m64n16k32.satfinite.s32.u8.u8" : "m64n16k32.s32.u8.u8",
                     true, static_cast<uint32_t>(start), true, a, b);
    for (uint32_t tid = 0; tid < 128; ++tid)
      for (uint32_t i = 0; i < 8; ++i) {
        const auto [row, col] = accumulator_at(tid, i);
        const int64_t sum = expected(row, col, false, start);
        const int64_t want = saturate ? std::min<int64_t>(sum, INT32_MAX)
                                      : static_cast<int32_t>(static_cast<uint32_t>(sum));
        EXPECT_EQ(static_cast<int32_t>(got[tid * 8 + i]), want)
            << (saturate ? "satfinite" : "wrapped") << " thread " << tid << " reg " << i;
      }
  }
}

}  // namespace
}  // namespace kiln::sim::testing
