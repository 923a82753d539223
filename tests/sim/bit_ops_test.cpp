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

// The PTX ISA's semantics of szext, transcribed step by step (mask, sign position, sign bit).
uint32_t isa_szext(uint32_t a, uint32_t b, bool clamp, bool is_signed) {
  uint32_t b1 = b & 0x1f;
  bool too_large = b >= 32 && clamp;
  uint32_t mask = too_large ? 0 : (~0u) << b1;
  uint32_t sign_pos = (b1 - 1) & 0x1f;
  bool sign_bit = (b1 == 0 || too_large || !is_signed) ? false : ((a >> sign_pos) & 1) != 0;
  return (a & ~mask) | (sign_bit ? mask : 0);
}

// The PTX ISA's semantics of bmsk: mask0 = ~0 << a1, mask1 = ~0 << (a1 + b1), with the overflow
// cases, d = mask0 & ~mask1.
uint32_t isa_bmsk(uint32_t a, uint32_t b, bool clamp) {
  uint32_t a1 = a & 0x1f, b1 = b & 0x1f, sum = a1 + b1;
  uint32_t mask0 = (~0u) << a1;
  uint32_t mask1 = sum >= 32 ? 0 : (~0u) << sum;
  bool position_overflow = false, width_overflow = false;
  if (clamp) {
    if (a >= 32) {
      position_overflow = true;
      mask0 = 0;
    }
    if (b >= 32) width_overflow = true;
  }
  if (sum >= 32 || position_overflow || width_overflow) {
    mask1 = 0;
  } else if (b1 == 0) {
    mask1 = ~0u;
  }
  return mask0 & ~mask1;
}

TEST_F(BitOpsTest, SzextAndBmskFollowThePtxIsaExamples) {
  EXPECT_EQ(eval("szext.wrap.u32 %d, %a, %b", 32, 32, {0xffffffffu}, {0}),
            (std::vector<uint64_t>{0}));
  EXPECT_EQ(eval("bmsk.wrap.b32 %d, %a, %b", 32, 32, {1}, {2}), (std::vector<uint64_t>{6}));
}

TEST_F(BitOpsTest, SzextAndBmskMatchTheIsaSemanticsForEveryWidth) {
  std::vector<uint64_t> a, b;
  const uint32_t values[] = {0x0u,        0x5au,       0x80u,      0xdeadbeefu,
                             0x7fffffffu, 0xffffffffu, 0x12345678u};
  const uint32_t widths[] = {0, 1, 2, 7, 8, 15, 16, 31, 32, 33, 40, 63, 64, 0xffffffffu};
  for (uint32_t v : values) {
    for (uint32_t w : widths) {
      a.push_back(v);
      b.push_back(w);
    }
  }
  for (bool clamp : {true, false}) {
    std::string mode = clamp ? "clamp" : "wrap";
    for (bool is_signed : {true, false}) {
      std::string form = "szext." + mode + (is_signed ? ".s32" : ".u32") + " %d, %a, %b";
      std::vector<uint64_t> got = eval(form, 32, 32, a, b);
      for (size_t i = 0; i < a.size(); ++i) {
        uint32_t av = static_cast<uint32_t>(a[i]), bv = static_cast<uint32_t>(b[i]);
        EXPECT_EQ(got[i], isa_szext(av, bv, clamp, is_signed))
            << form << " a " << av << " b " << bv;
      }
    }
    // bmsk: a is the bit position, b the width.
    std::vector<uint64_t> pos, width;
    for (uint32_t p : {0u, 1u, 5u, 16u, 31u, 32u, 33u, 100u}) {
      for (uint32_t w : widths) {
        pos.push_back(p);
        width.push_back(w);
      }
    }
    std::string form = "bmsk." + mode + ".b32 %d, %a, %b";
    std::vector<uint64_t> got = eval(form, 32, 32, pos, width);
    for (size_t i = 0; i < pos.size(); ++i) {
      uint32_t pv = static_cast<uint32_t>(pos[i]), wv = static_cast<uint32_t>(width[i]);
      EXPECT_EQ(got[i], isa_bmsk(pv, wv, clamp)) << form << " a " << pv << " b " << wv;
    }
  }
}

TEST_F(BitOpsTest, SzextWithoutAModeIsRefusedWithItsName) {
  ModuleHandle m = load(ptx_module(R"(
.visible .entry k()
{
  .reg .b32 %r<3>;
  mov.b32 %r1, 5;
  szext.s32 %r2, %r1, %r1;
  ret;
}
)"));
  LaunchReport r = launch(m, "k", {1}, {1}, Params());
  ASSERT_EQ(r.faults.size(), 1u);
  EXPECT_EQ(r.faults[0].kind, "unsupported_instruction");
  EXPECT_EQ(r.faults[0].instruction, "szext.s32");
  EXPECT_EQ(r.faults[0].ptx_line, 10u);
}

}  // namespace
}  // namespace kiln::sim::testing
