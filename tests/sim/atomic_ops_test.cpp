#include <gtest/gtest.h>

#include <bit>

#include "sim_test_util.h"

namespace kiln::sim::testing {
namespace {

class AtomicOpsTest : public SimTest {};

// Every thread i (of 2 blocks x 64) applies `op` with the value i + 1 to counters[0] in global
// memory, keeping the old value in olds[i], and (red) to a word of shared memory.
std::string kernel(const std::string& op, const std::string& type) {
  return ptx_module(R"(
.visible .entry k(.param .u64 counters, .param .u64 olds)
{
  .shared .align 8 .b8 s[8];
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .)" + type + R"( %v<4>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [counters];
  ld.param.u64 %rd2, [olds];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mad.lo.u32 %r3, %r2, 64, %r1;
  add.u32 %r5, %r3, 1;
  cvt.)" + type + R"(.u32 %v1, %r5;
  atom.global.)" + op +
                    "." + type + R"( %v2, [%rd1], %v1;
  mul.wide.u32 %rd3, %r3, 8;
  add.s64 %rd4, %rd2, %rd3;
  st.global.)" + type +
                    R"( [%rd4], %v2;
  mov.u32 %r4, s;
  red.shared.)" + op +
                    "." + type + R"( [%r4], %v1;
  ret;
}
)");
}

TEST_F(AtomicOpsTest, GlobalAddReturnsDistinctOldValuesAndTheTotal) {
  std::string text = kernel("add", "u32");
  // cvt.u32.u32 is fine; olds are 8 bytes apart, stored as u32.
  ModuleHandle m = load(text);
  uint64_t counters = zeros<uint32_t>(2);
  uint64_t olds = zeros<uint64_t>(128);
  LaunchReport r = run(m, "k", {2}, {64}, Params().add(counters).add(olds));
  EXPECT_EQ(download<uint32_t>(counters, 1)[0], 128u * 129 / 2);
  std::vector<uint64_t> got = download<uint64_t>(olds, 128);
  std::vector<bool> seen(128 * 129 / 2 + 1, false);
  for (uint64_t v : got) {
    uint32_t old = static_cast<uint32_t>(v);
    ASSERT_LE(old, 128u * 129 / 2);
    EXPECT_FALSE(seen[old]);
    seen[old] = true;
  }
  EXPECT_EQ(stat(r.stats.by_class, "atomic"), 256u);
}

TEST_F(AtomicOpsTest, MinMaxAndFloatAdd) {
  ModuleHandle m = load(kernel("max", "s32"));
  uint64_t counters = upload(std::vector<int32_t>{-100, 0});
  uint64_t olds = zeros<uint64_t>(128);
  run(m, "k", {2}, {64}, Params().add(counters).add(olds));
  EXPECT_EQ(download<int32_t>(counters, 1)[0], 128);
  ModuleHandle f = load(kernel("add", "f32"));
  uint64_t fc = zeros<float>(2);
  run(f, "k", {2}, {64}, Params().add(fc).add(zeros<uint64_t>(128)));
  EXPECT_EQ(download<float>(fc, 1)[0], 8256.0f);
}

TEST_F(AtomicOpsTest, CasExchIncDec) {
  // cas: memory holds a; compare with b, swap in c; %d gets the old value, then memory.
  const char* cas =
      "atom.global.cas.b32 %d, [%rd1], %b, %c; ld.global.u32 %c, [%rd1]; "
      "mov.b64 %d, {%d, %c}";
  EXPECT_EQ(eval(cas, 32, 64, {5, 5}, {5, 6}, {9, 9}),
            (std::vector<uint64_t>{(9ull << 32) | 5, (5ull << 32) | 5}));
  const char* inc =
      "atom.global.inc.u32 %d, [%rd1], %b; ld.global.u32 %c, [%rd1]; mov.b64 %d, {%d, %c}";
  EXPECT_EQ(eval(inc, 32, 64, {3, 7}, {10, 7}),
            (std::vector<uint64_t>{(4ull << 32) | 3, (0ull << 32) | 7}));
  const char* dec =
      "atom.global.dec.u32 %d, [%rd1], %b; ld.global.u32 %c, [%rd1]; mov.b64 %d, {%d, %c}";
  EXPECT_EQ(eval(dec, 32, 64, {0, 7}, {10, 10}),
            (std::vector<uint64_t>{(10ull << 32) | 0, (6ull << 32) | 7}));
  const char* exch = "atom.global.exch.b64 %d, [%rd1], %b";
  EXPECT_EQ(eval(exch, 64, 64, {1}, {2}), (std::vector<uint64_t>{1}));
}

TEST_F(AtomicOpsTest, HalfPrecisionPackedAdd) {
  // {1, 2} + {2, 2} = {3, 4} in f16x2.
  const char* code = "atom.global.add.noftz.f16x2 %d, [%rd1], %b; ld.global.b32 %d, [%rd1]";
  EXPECT_EQ(eval(code, 32, 32, {0x40003c00}, {0x40004000})[0], 0x44004200u);
}

}  // namespace
}  // namespace kiln::sim::testing
