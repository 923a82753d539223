#include <gtest/gtest.h>

#include "sim_test_util.h"

namespace kiln::sim::testing {
namespace {

class MemoryOpsTest : public SimTest {};

TEST_F(MemoryOpsTest, VectorLoadsAndStoresMoveWholeVectors) {
  ModuleHandle m = load(ptx_module(R"(
.visible .entry k(.param .u64 in, .param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 16;
  add.s64 %rd4, %rd1, %rd3;
  add.s64 %rd5, %rd2, %rd3;
  ld.global.nc.v4.u32 {%r2, %r3, %r4, %r5}, [%rd4];
  st.global.v4.u32 [%rd5], {%r5, %r4, %r3, %r2};
  ret;
}
)"));
  std::vector<uint32_t> in(64);
  for (uint32_t i = 0; i < 64; ++i) in[i] = i * 7 + 1;
  uint64_t pin = upload(in), pout = zeros<uint32_t>(64);
  run(m, "k", {1}, {16}, Params().add(pin).add(pout));
  std::vector<uint32_t> out = download<uint32_t>(pout, 64);
  for (uint32_t t = 0; t < 16; ++t) {
    for (uint32_t k = 0; k < 4; ++k) EXPECT_EQ(out[t * 4 + k], in[t * 4 + 3 - k]);
  }
}

TEST_F(MemoryOpsTest, NarrowLoadsSignOrZeroExtend) {
  EXPECT_EQ(eval("ld.global.s8 %d, [%rd1]", 64, 64, {0x80}), (std::vector<uint64_t>{~0ull << 7}));
  EXPECT_EQ(eval("ld.global.u8 %d, [%rd1]", 64, 64, {0x80}), (std::vector<uint64_t>{0x80}));
  EXPECT_EQ(eval("ld.global.s16 %d, [%rd1]", 64, 32, {0x8001}),
            (std::vector<uint64_t>{0xffff8001u}));
}

const char* const kLocalShared = R"(
.visible .entry k(.param .u64 out)
{
  .local .align 4 .b8 depot[64];
  .shared .align 4 .b8 tile[128];
  .reg .b32 %r<12>;
  .reg .b64 %rd<12>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  // Each thread fills its own local array, then sums it: local memory is per thread.
  mov.u64 %rd2, depot;
  mov.u32 %r2, 0;
FILL:
  mul.wide.u32 %rd3, %r2, 4;
  add.s64 %rd4, %rd2, %rd3;
  add.u32 %r3, %r1, %r2;
  st.local.u32 [%rd4], %r3;
  add.u32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, 16;
  @%p1 bra FILL;
  ld.local.u32 %r4, [%rd2+60];
  // Generic access to shared memory through cvta.
  mov.u64 %rd5, tile;
  cvta.shared.u64 %rd6, %rd5;
  mul.wide.u32 %rd7, %r1, 4;
  add.s64 %rd8, %rd6, %rd7;
  st.u32 [%rd8], %r4;
  bar.sync 0;
  xor.b32 %r5, %r1, 1;
  mul.wide.u32 %rd9, %r5, 4;
  add.s64 %rd10, %rd5, %rd9;
  ld.shared.u32 %r6, [%rd10];
  mul.wide.u32 %rd11, %r1, 4;
  add.s64 %rd11, %rd1, %rd11;
  st.global.u32 [%rd11], %r6;
  ret;
}
)";

TEST_F(MemoryOpsTest, LocalMemoryIsPerThreadAndGenericAddressesReachShared) {
  std::string text = ptx_module(kLocalShared);
  text.insert(text.find("  .reg .b32"), "  .reg .pred %p<2>;\n");
  ModuleHandle m = load(text);
  uint64_t out = zeros<uint32_t>(32);
  LaunchReport r = run(m, "k", {1}, {32}, Params().add(out));
  std::vector<uint32_t> got = download<uint32_t>(out, 32);
  for (uint32_t t = 0; t < 32; ++t) EXPECT_EQ(got[t], (t ^ 1) + 15) << t;
  EXPECT_EQ(stat(r.stats.bytes_by_space, "local"), 32u * 17 * 4);
  EXPECT_EQ(stat(r.stats.bytes_by_space, "shared"), 32u * 2 * 4);
}

const char* const kOutOfBounds = R"(
.file 1 "/src/kernel.cu"
.visible .entry k(.param .u64 out, .param .u32 n)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mad.lo.s32 %r3, %r2, 32, %r1;
  mul.wide.u32 %rd2, %r3, 4;
  add.s64 %rd3, %rd1, %rd2;
  .loc 1 42 7
  st.global.u32 [%rd3], %r3;
  ret;
}
)";

TEST_F(MemoryOpsTest, OutOfBoundsWriteReportsThreadBlockAddressAndLines) {
  ModuleHandle m = load(ptx_module(kOutOfBounds));
  uint64_t out = zeros<uint32_t>(40);  // 40 elements, 64 threads write
  LaunchReport r = launch(m, "k", {2}, {32}, Params().add(out).add(uint32_t{0}));
  ASSERT_EQ(r.faults.size(), 1u);
  const LaunchFault& f = r.faults[0];
  EXPECT_EQ(f.kind, "out_of_bounds");
  EXPECT_EQ(f.block.x, 1u);
  EXPECT_EQ(f.thread.x, 8u);
  EXPECT_EQ(f.address, out + 160);
  EXPECT_EQ(f.instruction, "st.global.u32");
  EXPECT_EQ(f.ptx_line, 18u);
  EXPECT_EQ(f.source.substr(0, 15), "/src/kernel.cu:");
  EXPECT_NE(f.source.find(":42:7"), std::string::npos) << f.source;
  EXPECT_NE(f.message.find("past the end"), std::string::npos) << f.message;
  // Everything before the faulting access was written.
  EXPECT_EQ(download<uint32_t>(out, 40)[39], 39u);
}

TEST_F(MemoryOpsTest, MisalignedAccessIsReported) {
  ModuleHandle m = load(ptx_module(R"(
.visible .entry k(.param .u64 out)
{
  .reg .b64 %rd<3>;
  .reg .b32 %r<2>;
  ld.param.u64 %rd1, [out];
  ld.global.u32 %r1, [%rd1+2];
  ret;
}
)"));
  LaunchReport r = launch(m, "k", {1}, {1}, Params().add(zeros<uint32_t>(4)));
  ASSERT_EQ(r.faults.size(), 1u);
  EXPECT_EQ(r.faults[0].kind, "misaligned");
}

TEST_F(MemoryOpsTest, SharedAccessBeyondTheLaunchSizeIsOutOfBounds) {
  ModuleHandle m = load(ptx_module(R"(
.extern .shared .align 16 .b8 dyn[];
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<4>;
  mov.u32 %r1, dyn;
  mov.u32 %r2, %tid.x;
  shl.b32 %r2, %r2, 2;
  add.u32 %r3, %r1, %r2;
  st.shared.u32 [%r3], %r2;
  ret;
}
)"));
  LaunchReport ok = run(m, "k", {1}, {32}, Params().add(uint64_t{0}), 128);
  EXPECT_TRUE(ok.ok());
  LaunchReport bad = launch(m, "k", {1}, {32}, Params().add(uint64_t{0}), 64);
  ASSERT_EQ(bad.faults.size(), 1u);
  EXPECT_EQ(bad.faults[0].kind, "out_of_bounds");
  EXPECT_EQ(bad.faults[0].thread.x, 16u);
}

TEST_F(MemoryOpsTest, ConstantVariablesAreReadable) {
  ModuleHandle m = load(ptx_module(R"(
.const .align 4 .u32 coeffs[4] = {3, 5, 7, 11};
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  mov.u64 %rd3, coeffs;
  add.s64 %rd4, %rd3, %rd2;
  ld.const.u32 %r2, [%rd4];
  add.s64 %rd5, %rd1, %rd2;
  st.global.u32 [%rd5], %r2;
  ret;
}
)"));
  uint64_t out = zeros<uint32_t>(4);
  LaunchReport r = run(m, "k", {1}, {4}, Params().add(out));
  EXPECT_EQ(download<uint32_t>(out, 4), (std::vector<uint32_t>{3, 5, 7, 11}));
  EXPECT_EQ(stat(r.stats.bytes_by_space, "const"), 16u);
}

TEST_F(MemoryOpsTest, SharedBankConflictsAreCounted) {
  ModuleHandle m = load(ptx_module(R"(
.visible .entry k(.param .u64 out)
{
  .shared .align 4 .b8 s[4096];
  .reg .b32 %r<4>;
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 7;
  mov.u32 %r3, s;
  add.u32 %r3, %r3, %r2;
  st.shared.u32 [%r3], %r1;
  ret;
}
)"));
  LaunchReport r = run(m, "k", {1}, {32}, Params().add(uint64_t{0}));
  EXPECT_EQ(r.stats.shared_bank_conflicts, 31u);
}

}  // namespace
}  // namespace kiln::sim::testing
