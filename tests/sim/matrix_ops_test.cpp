#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>

#include "half.h"
#include "sim_test_util.h"

namespace kiln::sim::testing {
namespace {

class MatrixOpsTest : public SimTest {};

// Loads one 8x8 b16 matrix M[r][c] = r * 8 + c from shared memory with ldmatrix .x1 (optionally
// .trans) and stores every lane's register; then stmatrix writes the registers back.
std::string ldmatrix_kernel(bool trans) {
  std::string t = trans ? ".trans" : "";
  return ptx_module(R"(
.visible .entry k(.param .u64 out, .param .u64 back)
{
  .shared .align 16 .b8 m[128];
  .shared .align 16 .b8 m2[128];
  .reg .b32 %r<12>;
  .reg .b16 %h<2>;
  .reg .b64 %rd<8>;
  .reg .pred %p<2>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, m;
  setp.ge.u32 %p1, %r1, 8;
  @%p1 bra FILLED;
  // row r = tid: 8 halves r*8 .. r*8+7
  shl.b32 %r3, %r1, 3;
  shl.b32 %r4, %r1, 4;
  add.u32 %r5, %r2, %r4;
  mov.u32 %r6, 0;
FILL:
  add.u32 %r7, %r3, %r6;
  cvt.u16.u32 %h1, %r7;
  shl.b32 %r8, %r6, 1;
  add.u32 %r9, %r5, %r8;
  st.shared.u16 [%r9], %h1;
  add.u32 %r6, %r6, 1;
  setp.lt.u32 %p1, %r6, 8;
  @%p1 bra FILL;
FILLED:
  bar.sync 0;
  and.b32 %r3, %r1, 7;
  shl.b32 %r4, %r3, 4;
  add.u32 %r5, %r2, %r4;
  ldmatrix.sync.aligned.m8n8.x1)" +
                    t + R"(.shared.b16 {%r10}, [%r5];
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r10;
  mov.u32 %r2, m2;
  add.u32 %r5, %r2, %r4;
  stmatrix.sync.aligned.m8n8.x1)" +
                    t + R"(.shared.b16 [%r5], {%r10};
  bar.sync 0;
  ld.param.u64 %rd4, [back];
  add.s64 %rd5, %rd4, %rd2;
  shl.b32 %r11, %r1, 2;
  add.u32 %r11, %r2, %r11;
  ld.shared.u32 %r9, [%r11];
  st.global.u32 [%rd5], %r9;
  ret;
}
)");
}

TEST_F(MatrixOpsTest, LdmatrixGivesEachLaneTwoElementsOfItsRow) {
  for (bool trans : {false, true}) {
    ModuleHandle m = load(ldmatrix_kernel(trans));
    uint64_t out = zeros<uint32_t>(32), back = zeros<uint32_t>(32);
    run(m, "k", {1}, {32}, Params().add(out).add(back));
    std::vector<uint32_t> got = download<uint32_t>(out, 32);
    for (uint32_t lane = 0; lane < 32; ++lane) {
      // PTX ISA: lane l holds row l/4, columns 2(l%4) and 2(l%4)+1 (of the transpose with .trans).
      uint32_t row = lane / 4, col = 2 * (lane % 4);
      uint32_t lo = trans ? col * 8 + row : row * 8 + col;
      uint32_t hi = trans ? (col + 1) * 8 + row : row * 8 + col + 1;
      EXPECT_EQ(got[lane], lo | (hi << 16)) << "trans " << trans << " lane " << lane;
    }
    // stmatrix with the same layout writes the matrix back as it was.
    std::vector<uint32_t> restored = download<uint32_t>(back, 32);
    for (uint32_t w = 0; w < 32; ++w) {
      EXPECT_EQ(restored[w], (2 * w) | ((2 * w + 1) << 16)) << "trans " << trans << " word " << w;
    }
  }
}

// A (16x16) row-major and B^T (8x16) row-major go through shared memory and ldmatrix into the
// mma fragments, as CUDA kernels do; C and D are 16x8 f32 row-major in global memory.
std::string mma_kernel(const std::string& type) {
  return ptx_module(
      R"(
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{
  .shared .align 16 .b8 sa[512];
  .shared .align 16 .b8 sb[256];
  .reg .b32 %r<40>;
  .reg .b64 %rd<20>;
  .reg .f32 %f<12>;
  mov.u32 %r1, %tid.x;
  ld.param.u64 %rd1, [pa];
  mul.wide.u32 %rd2, %r1, 16;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.v4.u32 {%r2, %r3, %r4, %r5}, [%rd3];
  mov.u32 %r6, sa;
  shl.b32 %r7, %r1, 4;
  add.u32 %r8, %r6, %r7;
  st.shared.v4.u32 [%r8], {%r2, %r3, %r4, %r5};
  ld.param.u64 %rd4, [pb];
  mul.wide.u32 %rd5, %r1, 8;
  add.s64 %rd6, %rd4, %rd5;
  ld.global.v2.u32 {%r9, %r10}, [%rd6];
  mov.u32 %r11, sb;
  shl.b32 %r12, %r1, 3;
  add.u32 %r13, %r11, %r12;
  st.shared.v2.u32 [%r13], {%r9, %r10};
  bar.sync 0;
  and.b32 %r14, %r1, 15;
  shl.b32 %r15, %r14, 5;
  shr.u32 %r16, %r1, 4;
  shl.b32 %r17, %r16, 4;
  add.u32 %r18, %r15, %r17;
  add.u32 %r19, %r6, %r18;
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r20, %r21, %r22, %r23}, [%r19];
  and.b32 %r24, %r1, 7;
  shl.b32 %r25, %r24, 5;
  shr.u32 %r26, %r1, 3;
  and.b32 %r26, %r26, 1;
  shl.b32 %r27, %r26, 4;
  add.u32 %r28, %r25, %r27;
  add.u32 %r29, %r11, %r28;
  ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%r30, %r31}, [%r29];
  // lane offset of c0/c1: row g, columns 2t, 2t+1 -> (g * 8 + 2t) * 4
  shr.u32 %r32, %r1, 2;
  shl.b32 %r32, %r32, 5;
  and.b32 %r33, %r1, 3;
  shl.b32 %r33, %r33, 3;
  add.u32 %r34, %r32, %r33;
  cvt.u64.u32 %rd7, %r34;
  ld.param.u64 %rd8, [pc];
  add.s64 %rd9, %rd8, %rd7;
  ld.global.v2.f32 {%f1, %f2}, [%rd9];
  ld.global.v2.f32 {%f3, %f4}, [%rd9+256];
  mma.sync.aligned.m16n8k16.row.col.f32.)" +
      type + "." + type +
      R"(.f32 {%f5, %f6, %f7, %f8}, {%r20, %r21, %r22, %r23}, {%r30, %r31}, {%f1, %f2, %f3, %f4};
  ld.param.u64 %rd10, [pd];
  add.s64 %rd11, %rd10, %rd7;
  st.global.v2.f32 [%rd11], {%f5, %f6};
  st.global.v2.f32 [%rd11+256], {%f7, %f8};
  ret;
}
)");
}

void check_mma(MatrixOpsTest& t, const std::string& type, SmallFloat format) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> small(-4, 4);
  std::vector<uint16_t> a(16 * 16), bt(8 * 16);
  std::vector<float> af(16 * 16), btf(8 * 16), c(16 * 8);
  for (size_t i = 0; i < a.size(); ++i) {
    af[i] = static_cast<float>(small(rng)) * 0.5f;
    a[i] = static_cast<uint16_t>(double_to_small(af[i], format, 0, false));
  }
  for (size_t i = 0; i < bt.size(); ++i) {
    btf[i] = static_cast<float>(small(rng));
    bt[i] = static_cast<uint16_t>(double_to_small(btf[i], format, 0, false));
  }
  for (float& v : c) v = static_cast<float>(small(rng)) * 0.25f;
  ModuleHandle m = t.load(mma_kernel(type));
  uint64_t pa = t.upload(a), pb = t.upload(bt), pc = t.upload(c), pd = t.zeros<float>(16 * 8);
  t.run(m, "k", {1}, {32}, Params().add(pa).add(pb).add(pc).add(pd));
  std::vector<float> got = t.download<float>(pd, 16 * 8);
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 8; ++j) {
      float expect = c[i * 8 + j];
      for (int k = 0; k < 16; ++k) expect += af[i * 16 + k] * btf[j * 16 + k];
      EXPECT_EQ(got[i * 8 + j], expect) << type << " D[" << i << "][" << j << "]";
    }
  }
}

TEST_F(MatrixOpsTest, MmaM16n8k16F16ComputesAxBPlusCWithPtxFragments) {
  check_mma(*this, "f16", kF16);
}

TEST_F(MatrixOpsTest, MmaM16n8k16Bf16ComputesAxBPlusC) { check_mma(*this, "bf16", kBF16); }

TEST_F(MatrixOpsTest, MmaNeedsTheWholeWarp) {
  std::string text = mma_kernel("f16");
  ModuleHandle m = load(text);
  LaunchReport r = launch(m, "k", {1}, {16},
                          Params()
                              .add(zeros<uint16_t>(256))
                              .add(zeros<uint16_t>(128))
                              .add(zeros<float>(128))
                              .add(zeros<float>(128)));
  ASSERT_EQ(r.faults.size(), 1u);
  EXPECT_NE(r.faults[0].message.find("all 32 threads"), std::string::npos);
}

// m16n8k32 e4m3: fragments built on the host from the PTX ISA's layout for 8-bit inputs:
// A reg r, byte e: row g + 8 (r & 1), column 4t + e + 16 (r >> 1); B reg r, byte e: k = 4t + e +
// 16 r, n = g; C/D reg r: row g + 8 (r >> 1), column 2t + (r & 1).
TEST_F(MatrixOpsTest, MmaM16n8k32Fp8UsesTheEightBitFragmentLayout) {
  std::string text = ptx_module(R"(
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pd)
{
  .reg .b32 %r<12>;
  .reg .b64 %rd<12>;
  .reg .f32 %f<12>;
  mov.u32 %r1, %tid.x;
  ld.param.u64 %rd1, [pa];
  mul.wide.u32 %rd2, %r1, 16;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.v4.u32 {%r2, %r3, %r4, %r5}, [%rd3];
  ld.param.u64 %rd4, [pb];
  mul.wide.u32 %rd5, %r1, 8;
  add.s64 %rd6, %rd4, %rd5;
  ld.global.v2.u32 {%r6, %r7}, [%rd6];
  mov.f32 %f1, 0f00000000;
  mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%f5, %f6, %f7, %f8}, {%r2, %r3, %r4, %r5}, {%r6, %r7}, {%f1, %f1, %f1, %f1};
  ld.param.u64 %rd7, [pd];
  add.s64 %rd8, %rd7, %rd2;
  st.global.v4.f32 [%rd8], {%f5, %f6, %f7, %f8};
  ret;
}
)");
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> small(-3, 3);
  float a[16][32], b[32][8];
  for (auto& row : a)
    for (float& v : row) v = static_cast<float>(small(rng));
  for (auto& row : b)
    for (float& v : row) v = static_cast<float>(small(rng));
  std::vector<uint32_t> fa(32 * 4, 0), fb(32 * 2, 0);
  for (uint32_t lane = 0; lane < 32; ++lane) {
    uint32_t g = lane / 4, t = lane % 4;
    for (uint32_t r = 0; r < 4; ++r) {
      for (uint32_t e = 0; e < 4; ++e) {
        uint32_t bits =
            double_to_small(a[g + 8 * (r & 1)][4 * t + e + 16 * (r >> 1)], kE4M3, 0, true);
        fa[lane * 4 + r] |= bits << (8 * e);
      }
    }
    for (uint32_t r = 0; r < 2; ++r) {
      for (uint32_t e = 0; e < 4; ++e) {
        uint32_t bits = double_to_small(b[4 * t + e + 16 * r][g], kE4M3, 0, true);
        fb[lane * 2 + r] |= bits << (8 * e);
      }
    }
  }
  ModuleHandle m = load(text);
  uint64_t pd = zeros<float>(128);
  run(m, "k", {1}, {32}, Params().add(upload(fa)).add(upload(fb)).add(pd));
  std::vector<float> got = download<float>(pd, 128);
  for (uint32_t lane = 0; lane < 32; ++lane) {
    uint32_t g = lane / 4, t = lane % 4;
    for (uint32_t r = 0; r < 4; ++r) {
      uint32_t row = g + 8 * (r >> 1), col = 2 * t + (r & 1);
      float expect = 0;
      for (int k = 0; k < 32; ++k) expect += a[row][k] * b[k][col];
      EXPECT_EQ(got[lane * 4 + r], expect) << "lane " << lane << " reg " << r;
    }
  }
}

}  // namespace
}  // namespace kiln::sim::testing
