#include <gtest/gtest.h>

#include "sim_test_util.h"

namespace kiln::sim::testing {
namespace {

class AsyncOpsTest : public SimTest {};

// Each thread copies 16 bytes of `in` into shared memory with cp.async (the last thread with
// src-size 4, so 12 bytes are zero-filled), reads its slot before and after waiting, and
// stores both.
const char* const kCpAsync = R"(
.visible .entry k(.param .u64 in, .param .u64 before, .param .u64 after)
{
  .shared .align 16 .b8 s[512];
  .reg .b32 %r<12>;
  .reg .b64 %rd<12>;
  .reg .pred %p<2>;
  mov.u32 %r1, %tid.x;
  ld.param.u64 %rd1, [in];
  mul.wide.u32 %rd2, %r1, 16;
  add.s64 %rd3, %rd1, %rd2;
  mov.u32 %r2, s;
  shl.b32 %r3, %r1, 4;
  add.u32 %r4, %r2, %r3;
  setp.eq.u32 %p1, %r1, 31;
  selp.u32 %r5, 4, 16, %p1;
  cp.async.cg.shared.global [%r4], [%rd3], 16, %r5;
  cp.async.commit_group;
  ld.shared.v4.u32 {%r6, %r7, %r8, %r9}, [%r4];
  ld.param.u64 %rd4, [before];
  add.s64 %rd5, %rd4, %rd2;
  st.global.v4.u32 [%rd5], {%r6, %r7, %r8, %r9};
  cp.async.wait_group 0;
  bar.sync 0;
  ld.shared.v4.u32 {%r6, %r7, %r8, %r9}, [%r4];
  ld.param.u64 %rd6, [after];
  add.s64 %rd7, %rd6, %rd2;
  st.global.v4.u32 [%rd7], {%r6, %r7, %r8, %r9};
  ret;
}
)";

TEST_F(AsyncOpsTest, CpAsyncLandsAtWaitGroupWithZeroFill) {
  ModuleHandle m = load(ptx_module(kCpAsync));
  std::vector<uint32_t> in(128);
  for (uint32_t i = 0; i < 128; ++i) in[i] = 1000 + i;
  uint64_t pin = upload(in), before = zeros<uint32_t>(128), after = zeros<uint32_t>(128);
  LaunchReport r = run(m, "k", {1}, {32}, Params().add(pin).add(before).add(after));
  std::vector<uint32_t> b = download<uint32_t>(before, 128), a = download<uint32_t>(after, 128);
  for (uint32_t i = 0; i < 128; ++i) {
    EXPECT_EQ(b[i], 0u) << i;
    uint32_t expect = i > 124 ? 0 : 1000 + i;
    EXPECT_EQ(a[i], expect) << i;
  }
  EXPECT_EQ(stat(r.stats.by_class, "async_copy"), 3u * 32);
}

// Warp 1 produces (writes shared, arrives: phase 0 completes); warp 0 waits on the parity of
// phase 0 with try_wait, reads what warp 1 wrote, and checks with test_wait that phase 1 (parity
// 1) has not completed (which would add 1000).
const char* const kMbarrier = R"(
.visible .entry k(.param .u64 out)
{
  .shared .align 8 .b64 bar;
  .shared .align 4 .b8 data[128];
  .reg .b32 %r<12>;
  .reg .b64 %rd<12>;
  .reg .pred %p<4>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, bar;
  mov.u32 %r3, data;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra INITED;
  mbarrier.init.shared.b64 [%r2], 32;
INITED:
  bar.sync 0;
  setp.lt.u32 %p2, %r1, 32;
  @%p2 bra CONSUMER;
  and.b32 %r4, %r1, 31;
  shl.b32 %r5, %r4, 2;
  add.u32 %r6, %r3, %r5;
  mul.lo.u32 %r7, %r4, 5;
  st.shared.u32 [%r6], %r7;
  mbarrier.arrive.shared.b64 %rd1, [%r2];
  bra.uni DONE;
CONSUMER:
WAIT0:
  mbarrier.try_wait.parity.shared.b64 %p3, [%r2], 0;
  @!%p3 bra WAIT0;
  mbarrier.test_wait.parity.shared.b64 %p3, [%r2], 1;
  shl.b32 %r5, %r1, 2;
  add.u32 %r6, %r3, %r5;
  ld.shared.u32 %r7, [%r6];
  selp.u32 %r8, 1000, 0, %p3;
  add.u32 %r7, %r7, %r8;
  ld.param.u64 %rd3, [out];
  mul.wide.u32 %rd4, %r1, 4;
  add.s64 %rd5, %rd3, %rd4;
  st.global.u32 [%rd5], %r7;
DONE:
  ret;
}
)";

TEST_F(AsyncOpsTest, MbarrierPhasesReleaseWaitersByParity) {
  ModuleHandle m = load(ptx_module(kMbarrier));
  uint64_t out = zeros<uint32_t>(32);
  run(m, "k", {1}, {64}, Params().add(out));
  std::vector<uint32_t> got = download<uint32_t>(out, 32);
  for (uint32_t i = 0; i < 32; ++i) EXPECT_EQ(got[i], i * 5) << i;
}

TEST_F(AsyncOpsTest, WaitingOnAPhaseNobodyCompletesHitsTheBudget) {
  SimulatorOptions options;
  options.instruction_budget = 200000;
  Device device(options);
  std::string text = ptx_module(R"(
.visible .entry k()
{
  .shared .align 8 .b64 bar;
  .reg .b32 %r<2>;
  .reg .pred %p<2>;
  mov.u32 %r1, bar;
  mbarrier.init.shared.b64 [%r1], 64;
WAIT:
  mbarrier.try_wait.parity.shared.b64 %p1, [%r1], 0;
  @!%p1 bra WAIT;
  ret;
}
)");
  Result<ModuleHandle> m = device.load_module(text);
  ASSERT_TRUE(m.ok());
  LaunchConfig config;
  config.block = {32};
  Result<LaunchReport> r = device.launch(*m, "k", config, {});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->faults.size(), 1u);
  EXPECT_EQ(r->faults[0].kind, "budget");
}

TEST_F(AsyncOpsTest, UsingAnUninitializedMbarrierIsReported) {
  ModuleHandle m = load(ptx_module(R"(
.visible .entry k()
{
  .shared .align 8 .b64 bar;
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  mov.u32 %r1, bar;
  mbarrier.arrive.shared.b64 %rd1, [%r1];
  ret;
}
)"));
  LaunchReport r = launch(m, "k", {1}, {32}, Params());
  ASSERT_EQ(r.faults.size(), 1u);
  EXPECT_NE(r.faults[0].message.find("before mbarrier.init"), std::string::npos);
}

}  // namespace
}  // namespace kiln::sim::testing
