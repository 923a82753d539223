#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cstdint>
#include <iterator>
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

// PTX ISA fragment layouts (element i of a lane's fragment, registers holding their elements
// low to high) for 8-bit A and B and for the 32-bit accumulators C/D; g = lane / 4, t = lane % 4.
struct Position {
  uint32_t row, col;
};
// A, 8-bit: m16n8k32 ("row g for a0-a3 and a8-a11, g + 8 for a4-a7 and a12-a15; col 4t + (i & 3),
// + 16 for i >= 8"), m16n8k16 (a0..a7 of the same), m8n8k16 (row g, col 4t + i).
Position a8(uint32_t m, uint32_t lane, uint32_t i) {
  uint32_t g = lane / 4, t = lane % 4;
  if (m == 8) return {g, 4 * t + i};
  return {(i % 8) < 4 ? g : g + 8, 4 * t + (i & 3) + (i >= 8 ? 16 : 0)};
}
// B, 8-bit: row (k) 4t + (i & 3), + 16 for i >= 4; col g.
Position b8(uint32_t lane, uint32_t i) {
  uint32_t g = lane / 4, t = lane % 4;
  return {4 * t + (i & 3) + (i >= 4 ? 16 : 0), g};
}
// C/D: row g for c0, c1 and g + 8 for c2, c3; col 2t + (i & 1).
Position c32(uint32_t lane, uint32_t i) {
  uint32_t g = lane / 4, t = lane % 4;
  return {i < 2 ? g : g + 8, 2 * t + (i & 1)};
}

// Runs `instruction` once: lane l's registers come from a[l * na + r], b[l * nb + r] and
// c[l * nd + r]; its D registers are returned at [l * nd + r].
std::vector<uint32_t> run_mma(MatrixOpsTest& t, const std::string& instruction, uint32_t na,
                              uint32_t nb, uint32_t nd, const std::vector<uint32_t>& a,
                              const std::vector<uint32_t>& b, const std::vector<uint32_t>& c) {
  auto list = [](const char* name, uint32_t n) {
    std::string out = "{";
    for (uint32_t i = 0; i < n; ++i)
      out += (i ? ", %" : "%") + std::string(name) + std::to_string(i);
    return out + "}";
  };
  auto load = [](const char* name, const char* param, uint32_t n) {
    std::string out = "  ld.param.u64 %rd1, [" + std::string(param) +
                      "];\n  mul.wide.u32 %rd2, %t, " + std::to_string(4 * n) +
                      ";\n  add.s64 %rd1, %rd1, %rd2;\n";
    for (uint32_t i = 0; i < n; ++i)
      out += "  ld.global.b32 %" + std::string(name) + std::to_string(i) + ", [%rd1+" +
             std::to_string(4 * i) + "];\n";
    return out;
  };
  std::string body =
      ".visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n{\n"
      "  .reg .b32 %a<4>, %b<2>, %c<4>, %d<4>, %t;\n  .reg .b64 %rd<3>;\n"
      "  mov.u32 %t, %tid.x;\n" +
      load("a", "pa", na) + load("b", "pb", nb) + load("c", "pc", nd) + "  " + instruction + " " +
      list("d", nd) + ", " + list("a", na) + ", " + list("b", nb) + ", " + list("c", nd) +
      ";\n  ld.param.u64 %rd1, [pd];\n  mul.wide.u32 %rd2, %t, " + std::to_string(4 * nd) +
      ";\n  add.s64 %rd1, %rd1, %rd2;\n";
  for (uint32_t i = 0; i < nd; ++i)
    body += "  st.global.b32 [%rd1+" + std::to_string(4 * i) + "], %d" + std::to_string(i) + ";\n";
  body += "  ret;\n}\n";
  ModuleHandle m = t.load(ptx_module(body));
  uint64_t pd = t.zeros<uint32_t>(32 * nd);
  t.run(m, "k", {1}, {32}, Params().add(t.upload(a)).add(t.upload(b)).add(t.upload(c)).add(pd));
  return t.download<uint32_t>(pd, 32 * nd);
}

// Values exact in both e4m3 and e5m2, so that a product is exact whichever format encodes it.
constexpr double kFp8Values[] = {-3, -2, -1.5, -1, -0.75, -0.5, 0, 0.25, 0.5, 0.75, 1, 1.5, 2, 3};

// An fp8 mma with A in `fa` and B in `fb`: the same values encoded in each operand's own format,
// so reading either operand in the other format changes the product.
void check_fp8_mma(MatrixOpsTest& t, uint32_t k, const std::string& a_type, SmallFloat fa,
                   const std::string& b_type, SmallFloat fb, bool f16_accumulator) {
  std::mt19937 rng(11 + k);
  std::uniform_int_distribution<size_t> pick(0, std::size(kFp8Values) - 1);
  double a[16][32], b[32][8], c[16][8];
  for (auto& row : a)
    for (double& v : row) v = kFp8Values[pick(rng)];
  for (auto& row : b)
    for (double& v : row) v = kFp8Values[pick(rng)];
  for (auto& row : c)
    for (double& v : row) v = kFp8Values[pick(rng)] * 4;
  uint32_t na = k / 8, nb = k / 16, nd = f16_accumulator ? 2 : 4;
  std::vector<uint32_t> ra(32 * na, 0), rb(32 * nb, 0), rc(32 * nd, 0);
  for (uint32_t lane = 0; lane < 32; ++lane) {
    for (uint32_t i = 0; i < 4 * na; ++i) {
      Position p = a8(16, lane, i);
      ra[lane * na + i / 4] |= double_to_small(a[p.row][p.col], fa, 0, false) << (8 * (i % 4));
    }
    for (uint32_t i = 0; i < 4 * nb; ++i) {
      Position p = b8(lane, i);
      rb[lane * nb + i / 4] |= double_to_small(b[p.row][p.col], fb, 0, false) << (8 * (i % 4));
    }
    for (uint32_t i = 0; i < 4; ++i) {
      Position p = c32(lane, i);
      if (f16_accumulator) {  // two f16x2 registers: (c0, c1), (c2, c3)
        rc[lane * nd + i / 2] |= double_to_small(c[p.row][p.col], kF16, 0, false) << (16 * (i % 2));
      } else {
        rc[lane * nd + i] = std::bit_cast<uint32_t>(static_cast<float>(c[p.row][p.col]));
      }
    }
  }
  std::string acc = f16_accumulator ? "f16" : "f32";
  std::string form = "mma.sync.aligned.m16n8k" + std::to_string(k) + ".row.col." + acc + "." +
                     a_type + "." + b_type + "." + acc;
  std::vector<uint32_t> got = run_mma(t, form, na, nb, nd, ra, rb, rc);
  for (uint32_t lane = 0; lane < 32; ++lane) {
    for (uint32_t i = 0; i < 4; ++i) {
      Position p = c32(lane, i);
      double expect = c[p.row][p.col];
      for (uint32_t kk = 0; kk < k; ++kk) expect += a[p.row][kk] * b[kk][p.col];
      // The sums are multiples of 1/16 below 2^10: exact in f16 and f32.
      uint32_t word = got[lane * nd + (f16_accumulator ? i / 2 : i)];
      double value = f16_accumulator ? small_to_double((word >> (16 * (i % 2))) & 0xffff, kF16)
                                     : std::bit_cast<float>(word);
      EXPECT_EQ(value, expect) << form << " lane " << lane << " c" << i;
    }
  }
}

TEST_F(MatrixOpsTest, MmaFp8MixedInputsReadEachOperandInItsOwnFormat) {
  check_fp8_mma(*this, 32, "e4m3", kE4M3, "e5m2", kE5M2, false);
  check_fp8_mma(*this, 32, "e5m2", kE5M2, "e4m3", kE4M3, false);
  check_fp8_mma(*this, 32, "e5m2", kE5M2, "e5m2", kE5M2, false);
}

TEST_F(MatrixOpsTest, MmaFp8M16n8k16AndF16Accumulators) {
  check_fp8_mma(*this, 16, "e4m3", kE4M3, "e4m3", kE4M3, false);
  check_fp8_mma(*this, 16, "e5m2", kE5M2, "e4m3", kE4M3, true);
  check_fp8_mma(*this, 32, "e4m3", kE4M3, "e5m2", kE5M2, true);
}

// An integer mma: A and B bytes drawn at random (read as s8 or u8 by the test as the types
// say), C chosen by `c_of`; expected D is the exact sum, wrapped to 32 bits or, with
// .satfinite, clamped to the int32 range.
void check_int8_mma(MatrixOpsTest& t, uint32_t m, uint32_t k, bool a_signed, bool b_signed,
                    bool satfinite, int32_t (*c_of)(uint32_t row, uint32_t col)) {
  std::mt19937 rng(m * 100 + k + (a_signed ? 1 : 0) + (b_signed ? 2 : 0));
  std::uniform_int_distribution<uint32_t> byte(0, 255);
  uint8_t a[16][32], b[32][8];
  for (auto& row : a)
    for (uint8_t& v : row) v = static_cast<uint8_t>(byte(rng));
  for (auto& row : b)
    for (uint8_t& v : row) v = static_cast<uint8_t>(byte(rng));
  auto value = [](uint8_t bits, bool is_signed) -> int64_t {
    return is_signed ? static_cast<int8_t>(bits) : bits;
  };
  uint32_t na = m * k / 128, nb = k / 16, nd = m / 4;
  std::vector<uint32_t> ra(32 * na, 0), rb(32 * nb, 0), rc(32 * nd, 0);
  for (uint32_t lane = 0; lane < 32; ++lane) {
    for (uint32_t i = 0; i < 4 * na; ++i) {
      Position p = a8(m, lane, i);
      ra[lane * na + i / 4] |= uint32_t{a[p.row][p.col]} << (8 * (i % 4));
    }
    for (uint32_t i = 0; i < 4 * nb; ++i) {
      Position p = b8(lane, i);
      rb[lane * nb + i / 4] |= uint32_t{b[p.row][p.col]} << (8 * (i % 4));
    }
    for (uint32_t i = 0; i < nd; ++i) {
      Position p = c32(lane, i);
      rc[lane * nd + i] = static_cast<uint32_t>(c_of(p.row, p.col));
    }
  }
  std::string form = "mma.sync.aligned.m" + std::to_string(m) + "n8k" + std::to_string(k) +
                     ".row.col" + (satfinite ? ".satfinite" : "") + ".s32." +
                     (a_signed ? "s8" : "u8") + "." + (b_signed ? "s8" : "u8") + ".s32";
  std::vector<uint32_t> got = run_mma(t, form, na, nb, nd, ra, rb, rc);
  for (uint32_t lane = 0; lane < 32; ++lane) {
    for (uint32_t i = 0; i < nd; ++i) {
      Position p = c32(lane, i);
      int64_t sum = c_of(p.row, p.col);
      for (uint32_t kk = 0; kk < k; ++kk)
        sum += value(a[p.row][kk], a_signed) * value(b[kk][p.col], b_signed);
      int64_t expect = satfinite ? std::clamp<int64_t>(sum, INT32_MIN, INT32_MAX)
                                 : static_cast<int32_t>(static_cast<uint32_t>(sum));
      EXPECT_EQ(static_cast<int32_t>(got[lane * nd + i]), expect)
          << form << " lane " << lane << " c" << i;
    }
  }
}

int32_t small_c(uint32_t row, uint32_t col) {
  return static_cast<int32_t>(row * 1000) - static_cast<int32_t>(col * 77);
}
// Rows 0-7 sit just below INT32_MAX (the products push them over), rows 8-15 just above
// INT32_MIN; even columns start at the limit itself.
int32_t edge_c(uint32_t row, uint32_t col) {
  int32_t slack = (col % 2 == 0) ? 0 : 3;
  return row < 8 ? INT32_MAX - slack : INT32_MIN + slack;
}

TEST_F(MatrixOpsTest, MmaInt8EveryShapeAndSignednessMix) {
  for (bool a_signed : {true, false}) {
    for (bool b_signed : {true, false}) {
      check_int8_mma(*this, 16, 32, a_signed, b_signed, false, small_c);
      check_int8_mma(*this, 16, 16, a_signed, b_signed, false, small_c);
      check_int8_mma(*this, 8, 16, a_signed, b_signed, false, small_c);
    }
  }
}

TEST_F(MatrixOpsTest, MmaInt8WrapsOnOverflowAndSatfiniteClamps) {
  for (bool satfinite : {false, true}) {
    check_int8_mma(*this, 16, 32, false, false, satfinite, edge_c);  // u8 x u8: sums >= 0
    check_int8_mma(*this, 16, 16, true, true, satfinite, edge_c);
    check_int8_mma(*this, 8, 16, true, false, satfinite, edge_c);
  }
}

TEST_F(MatrixOpsTest, MmaFormsOutsideThePtxIsaStopWithTheirNameAndLine) {
  // .dtype unlike .ctype (not allowed for m16n8k16), and .satfinite on a float mma.
  for (const char* form : {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f16",
                           "mma.sync.aligned.m16n8k16.row.col.satfinite.f32.e4m3.e4m3.f32"}) {
    std::string text = ptx_module(std::string(R"(
.visible .entry k()
{
  .reg .b32 %r<12>;
  mov.b32 %r0, 0;
  )") + form + R"( {%r0, %r1, %r2, %r3}, {%r4, %r5, %r6, %r7}, {%r8, %r9}, {%r0, %r1, %r2, %r3};
  ret;
}
)");
    ModuleHandle m = load(text);
    LaunchReport r = launch(m, "k", {1}, {32}, Params());
    ASSERT_EQ(r.faults.size(), 1u) << form;
    EXPECT_EQ(r.faults[0].kind, "unsupported_instruction");
    EXPECT_EQ(r.faults[0].ptx_line, 10u) << form;
    EXPECT_NE(r.faults[0].message.find(form), std::string::npos) << r.faults[0].message;
    EXPECT_NE(r.faults[0].message.find("PTX line 10"), std::string::npos) << r.faults[0].message;
  }
}

}  // namespace
}  // namespace kiln::sim::testing
