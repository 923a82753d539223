#include <gtest/gtest.h>

#include "sim_test_util.h"

namespace kiln::sim::testing {
namespace {

class ControlTest : public SimTest {};

// out[tid] = value computed by `body` into %r9; %r1 = tid.x; %rd1 = out.
std::string per_thread(const std::string& body, const std::string& extra_regs = "") {
  return ptx_module(R"(
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<20>;
  .reg .b64 %rd<10>;
  .reg .pred %p<6>;
)" + extra_regs + R"(
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
)" + body + R"(
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r9;
  ret;
}
)");
}

TEST_F(ControlTest, DivergentIfElseReconvergesAtThePostDominator) {
  ModuleHandle m = load(per_thread(R"(
  and.b32 %r2, %r1, 1;
  setp.eq.u32 %p1, %r2, 0;
  @%p1 bra EVEN;
  mov.u32 %r3, 100;
  bra.uni JOIN;
EVEN:
  mov.u32 %r3, 200;
JOIN:
  activemask.b32 %r4;
  setp.eq.u32 %p2, %r4, -1;
  selp.u32 %r5, 1000, 0, %p2;
  add.u32 %r6, %r3, %r1;
  add.u32 %r9, %r6, %r5;
)"));
  uint64_t out = zeros<uint32_t>(32);
  LaunchReport r = run(m, "k", {1}, {32}, Params().add(out));
  std::vector<uint32_t> got = download<uint32_t>(out, 32);
  for (uint32_t t = 0; t < 32; ++t) EXPECT_EQ(got[t], (t % 2 == 0 ? 200u : 100u) + t + 1000u);
  EXPECT_EQ(r.stats.divergent_branches, 1u);
}

TEST_F(ControlTest, LoopsRunAPerLaneTripCount) {
  // sum of 0..tid-1
  ModuleHandle m = load(per_thread(R"(
  mov.u32 %r9, 0;
  mov.u32 %r2, 0;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra END;
LOOP:
  add.u32 %r9, %r9, %r2;
  add.u32 %r2, %r2, 1;
  setp.lt.u32 %p2, %r2, %r1;
  @%p2 bra LOOP;
END:
  activemask.b32 %r3;
  setp.ne.u32 %p3, %r3, -1;
  @%p3 mov.u32 %r9, 12345;
)"));
  uint64_t out = zeros<uint32_t>(64);
  run(m, "k", {1}, {64}, Params().add(out));
  std::vector<uint32_t> got = download<uint32_t>(out, 64);
  for (uint32_t t = 0; t < 64; ++t) EXPECT_EQ(got[t], t * (t - (t ? 1 : 0)) / 2) << t;
}

TEST_F(ControlTest, NestedDivergenceReconvergesInnerThenOuter) {
  ModuleHandle m = load(per_thread(R"(
  mov.u32 %r9, 0;
  setp.lt.u32 %p1, %r1, 16;
  @%p1 bra LOW;
  setp.lt.u32 %p2, %r1, 24;
  @%p2 bra MID;
  add.u32 %r9, %r9, 3;
  bra.uni HIGH_JOIN;
MID:
  add.u32 %r9, %r9, 2;
HIGH_JOIN:
  activemask.b32 %r4;
  popc.b32 %r5, %r4;
  add.u32 %r9, %r9, %r5;
  bra.uni JOIN;
LOW:
  add.u32 %r9, %r9, 1;
JOIN:
  activemask.b32 %r6;
  popc.b32 %r7, %r6;
  mul.lo.u32 %r7, %r7, 100;
  add.u32 %r9, %r9, %r7;
)"));
  uint64_t out = zeros<uint32_t>(32);
  run(m, "k", {1}, {32}, Params().add(out));
  std::vector<uint32_t> got = download<uint32_t>(out, 32);
  for (uint32_t t = 0; t < 32; ++t) {
    uint32_t expect = t < 16 ? 1 : t < 24 ? 2 + 16 : 3 + 16;
    EXPECT_EQ(got[t], expect + 3200) << t;
  }
}

TEST_F(ControlTest, EarlyExitLeavesTheOtherLanesRunning) {
  ModuleHandle m = load(per_thread(R"(
  mov.u32 %r9, 7;
  setp.ge.u32 %p1, %r1, 20;
  @%p1 exit;
  activemask.b32 %r9;
)"));
  uint64_t out = upload(std::vector<uint32_t>(32, 1));
  run(m, "k", {1}, {32}, Params().add(out));
  std::vector<uint32_t> got = download<uint32_t>(out, 32);
  for (uint32_t t = 0; t < 32; ++t) EXPECT_EQ(got[t], t < 20 ? 0xfffffu : 1u) << t;
}

const char* const kBarrierKernel = R"(
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<20>;
  .reg .b64 %rd<10>;
  .reg .pred %p<6>;
  .shared .align 4 .b8 buf[512];
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, buf;
  shl.b32 %r3, %r1, 2;
  add.u32 %r4, %r2, %r3;
  mul.lo.u32 %r5, %r1, 3;
  st.shared.u32 [%r4], %r5;
  bar.sync 0;
  // read the neighbour's value written by another warp
  add.u32 %r6, %r1, 37;
  rem.u32 %r6, %r6, 128;
  shl.b32 %r7, %r6, 2;
  add.u32 %r8, %r2, %r7;
  ld.shared.u32 %r9, [%r8];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r9;
  ret;
}
)";

TEST_F(ControlTest, BarSyncMakesOtherWarpsSharedWritesVisible) {
  ModuleHandle m = load(ptx_module(kBarrierKernel));
  uint64_t out = zeros<uint32_t>(128);
  LaunchReport r = run(m, "k", {2}, {128}, Params().add(out));
  std::vector<uint32_t> got = download<uint32_t>(out, 128);
  for (uint32_t t = 0; t < 128; ++t) EXPECT_EQ(got[t], ((t + 37) % 128) * 3) << t;
  EXPECT_EQ(stat(r.stats.by_class, "barrier"), 2u * 128);
}

TEST_F(ControlTest, NamedBarrierWithCountSynchronizesASubsetOfWarps) {
  // Warps 0-1 use barrier 1 with 64 threads; warps 2-3 never touch it.
  ModuleHandle m = load(per_thread(R"(
  mov.u32 %r9, 5;
  setp.ge.u32 %p1, %r1, 64;
  @%p1 bra SKIP;
  bar.sync 1, 64;
  mov.u32 %r9, 6;
SKIP:
)"));
  uint64_t out = zeros<uint32_t>(128);
  run(m, "k", {1}, {128}, Params().add(out));
  std::vector<uint32_t> got = download<uint32_t>(out, 128);
  for (uint32_t t = 0; t < 128; ++t) EXPECT_EQ(got[t], t < 64 ? 6u : 5u) << t;
}

TEST_F(ControlTest, BarrierNobodyCompletesIsADeadlock) {
  ModuleHandle m = load(per_thread(R"(
  mov.u32 %r9, 0;
  bar.sync 2, 96;
)"));
  uint64_t out = zeros<uint32_t>(64);
  LaunchReport r = launch(m, "k", {1}, {64}, Params().add(out));
  ASSERT_EQ(r.faults.size(), 1u);
  EXPECT_EQ(r.faults[0].kind, "deadlock");
  EXPECT_NE(r.faults[0].message.find("barrier 2 (64 of 96 threads arrived)"), std::string::npos)
      << r.faults[0].message;
}

TEST_F(ControlTest, BarrierAfterEarlyExitCountsOnlyLiveThreads) {
  ModuleHandle m = load(per_thread(R"(
  mov.u32 %r9, 9;
  setp.ge.u32 %p1, %r1, 32;
  @%p1 exit;
  bar.sync 0;
)"));
  uint64_t out = zeros<uint32_t>(64);
  LaunchReport r = run(m, "k", {1}, {64}, Params().add(out));
  EXPECT_TRUE(r.ok());
}

TEST_F(ControlTest, BarrierInsideDivergentCodeIsReported) {
  ModuleHandle m = load(per_thread(R"(
  mov.u32 %r9, 0;
  setp.lt.u32 %p1, %r1, 8;
  @%p1 bra IN;
  bra.uni OUT;
IN:
  bar.sync 0;
OUT:
)"));
  uint64_t out = zeros<uint32_t>(32);
  LaunchReport r = launch(m, "k", {1}, {32}, Params().add(out));
  ASSERT_EQ(r.faults.size(), 1u);
  EXPECT_EQ(r.faults[0].kind, "barrier_divergence");
  EXPECT_EQ(r.faults[0].instruction, "bar.sync");
  EXPECT_GT(r.faults[0].ptx_line, 0u);
}

TEST_F(ControlTest, InfiniteLoopStopsOnTheInstructionBudget) {
  SimulatorOptions options;
  options.instruction_budget = 100000;
  Device device(options);
  Result<ModuleHandle> m = device.load_module(per_thread(R"(
  mov.u32 %r9, 0;
SPIN:
  add.u32 %r9, %r9, 1;
  bra.uni SPIN;
)"));
  ASSERT_TRUE(m.ok());
  Result<uint64_t> out = device.allocate(128);
  LaunchConfig config;
  config.block = {32};
  Result<LaunchReport> r = device.launch(*m, "k", config, Params().add(*out).bytes());
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->faults.size(), 1u);
  EXPECT_EQ(r->faults[0].kind, "budget");
  EXPECT_NE(r->faults[0].message.find("loop forever"), std::string::npos);
}

TEST_F(ControlTest, TrapStopsTheLaunch) {
  ModuleHandle m = load(per_thread(R"(
  mov.u32 %r9, 0;
  setp.eq.u32 %p1, %r1, 5;
  @%p1 trap;
)"));
  uint64_t out = zeros<uint32_t>(32);
  LaunchReport r = launch(m, "k", {1}, {32}, Params().add(out));
  ASSERT_EQ(r.faults.size(), 1u);
  EXPECT_EQ(r.faults[0].kind, "trap");
  EXPECT_EQ(r.faults[0].thread.x, 5u);
}

TEST_F(ControlTest, UnsupportedInstructionNamesItselfOnlyWhenExecuted) {
  ModuleHandle m = load(per_thread(R"(
  mov.u32 %r9, 1;
  setp.eq.u32 %p1, %r1, 99;
  @!%p1 bra SKIP;
  vabsdiff.u32.u32.u32 %r9, %r1, %r1, %r1;
SKIP:
)"));
  uint64_t out = zeros<uint32_t>(32);
  LaunchReport ok = run(m, "k", {1}, {32}, Params().add(out));
  EXPECT_TRUE(ok.ok());
  LaunchReport bad = launch(m, "k", {1}, {128}, Params().add(zeros<uint32_t>(128)));
  ASSERT_EQ(bad.faults.size(), 1u);
  EXPECT_EQ(bad.faults[0].kind, "unsupported_instruction");
  EXPECT_NE(bad.faults[0].message.find("vabsdiff.u32.u32.u32"), std::string::npos);
  EXPECT_NE(bad.faults[0].message.find("PTX line"), std::string::npos);
  EXPECT_EQ(bad.faults[0].thread.x, 99u);
}

TEST_F(ControlTest, SpecialRegistersDescribeTheLaunch) {
  ModuleHandle m = load(per_thread(R"(
  mov.u32 %r2, %ntid.y;
  mov.u32 %r3, %tid.y;
  mov.u32 %r4, %nctaid.x;
  mov.u32 %r5, %warpid;
  mov.u32 %r6, %laneid;
  mov.u32 %r7, %lanemask_lt;
  popc.b32 %r7, %r7;
  mad.lo.u32 %r9, %r2, 1000000, 0;
  mad.lo.u32 %r9, %r3, 100000, %r9;
  mad.lo.u32 %r9, %r4, 10000, %r9;
  mad.lo.u32 %r9, %r5, 1000, %r9;
  add.u32 %r9, %r9, %r6;
  sub.u32 %r9, %r9, %r7;
  add.u32 %r9, %r9, %r6;
)"));
  // block 8x4: tid.x in 0..7, so store index = tid.x only; use a 32x2 block instead.
  uint64_t out = zeros<uint32_t>(32);
  run(m, "k", {3}, {32, 2}, Params().add(out));
  std::vector<uint32_t> got = download<uint32_t>(out, 32);
  // Both rows store to out[tid.x]; the warp of row 1 runs last.
  for (uint32_t t = 0; t < 32; ++t) EXPECT_EQ(got[t], 2000000u + 100000 + 30000 + 1000 + t) << t;
}

TEST_F(ControlTest, BarRedCountsAndCombinesPredicatesAcrossTheBlock) {
  // __syncthreads_count(tid % 3 == 0), __syncthreads_and(tid < 96), __syncthreads_or(tid == 77)
  ModuleHandle m = load(per_thread(R"(
  rem.u32 %r2, %r1, 3;
  setp.eq.u32 %p1, %r2, 0;
  bar.red.popc.u32 %r3, 0, %p1;
  setp.lt.u32 %p2, %r1, 96;
  bar.red.and.pred %p3, 0, %p2;
  setp.eq.u32 %p4, %r1, 77;
  bar.red.or.pred %p5, 0, %p4;
  selp.u32 %r4, 1000, 0, %p3;
  selp.u32 %r5, 2000, 0, %p5;
  add.u32 %r9, %r3, %r4;
  add.u32 %r9, %r9, %r5;
)"));
  uint64_t out = zeros<uint32_t>(96);
  run(m, "k", {1}, {96}, Params().add(out));
  std::vector<uint32_t> got = download<uint32_t>(out, 96);
  for (uint32_t t = 0; t < 96; ++t) EXPECT_EQ(got[t], 32u + 1000 + 2000) << t;
}

TEST_F(ControlTest, SharedMemorySizesAndAClusterOfOneAreVisible) {
  ModuleHandle m = load(per_thread(R"(
  mov.u32 %r2, %dynamic_smem_size;
  mov.u32 %r3, %total_smem_size;
  mov.u32 %r4, %cluster_nctarank;
  mov.u32 %r5, %cluster_ctarank;
  mad.lo.u32 %r9, %r2, 100000, %r3;
  mad.lo.u32 %r9, %r4, 10, %r9;
  add.u32 %r9, %r9, %r5;
)"));
  uint64_t out = zeros<uint32_t>(32);
  run(m, "k", {1}, {32}, Params().add(out), 48);
  // No static shared memory: the total is the 48 dynamic bytes.
  EXPECT_EQ(download<uint32_t>(out, 1)[0], 48u * 100000 + 48 + 10);
}

// A cluster of two CTAs: each writes its rank into its shared memory, waits at the cluster
// barrier, then reads its neighbour's word through mapa and ld.shared::cluster.
const char* const kCluster = R"(
.visible .entry k(.param .u64 out)
{
  .shared .align 4 .u32 word;
  .reg .b32 %r<12>;
  .reg .b64 %rd<6>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %cluster_ctarank;
  mov.u32 %r3, %cluster_nctarank;
  mov.u32 %r4, word;
  add.u32 %r5, %r2, 100;
  st.shared.u32 [%r4], %r5;
  barrier.cluster.arrive.release;
  barrier.cluster.wait.acquire;
  add.u32 %r6, %r2, 1;
  rem.u32 %r6, %r6, %r3;
  mapa.shared::cluster.u32 %r7, %r4, %r6;
  ld.shared::cluster.u32 %r8, [%r7];
  mov.u32 %r9, %ctaid.x;
  mad.lo.u32 %r10, %r9, 32, %r1;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r10, 4;
  add.s64 %rd3, %rd1, %rd2;
  mad.lo.u32 %r11, %r2, 1000, %r8;
  st.global.u32 [%rd3], %r11;
  ret;
}
)";

TEST_F(ControlTest, ClusterCtasShareMemoryThroughMapaAndSynchronize) {
  ModuleHandle m = load(ptx_module(kCluster));
  uint64_t out = zeros<uint32_t>(4 * 32);
  LaunchConfig config;
  config.grid = {4};
  config.block = {32};
  config.cluster = {2, 1, 1};
  Result<LaunchReport> r = device_.launch(m, "k", config, Params().add(out).bytes());
  ASSERT_TRUE(r.ok());
  for (const LaunchFault& f : r->faults) ADD_FAILURE() << f.kind << ": " << f.message;
  std::vector<uint32_t> got = download<uint32_t>(out, 4 * 32);
  for (uint32_t cta = 0; cta < 4; ++cta) {
    uint32_t rank = cta % 2, neighbour = (rank + 1) % 2;
    for (uint32_t t = 0; t < 32; ++t) EXPECT_EQ(got[cta * 32 + t], rank * 1000 + 100 + neighbour);
  }
  // A rank outside the cluster is reported.
  config.cluster = {1, 1, 1};
  Result<LaunchReport> alone = device_.launch(m, "k", config, Params().add(out).bytes());
  ASSERT_TRUE(alone.ok());
  EXPECT_TRUE(alone->ok());  // rank (0 + 1) % 1 = 0: its own word
  config.grid = {3};
  config.cluster = {2, 1, 1};
  Result<LaunchReport> uneven = device_.launch(m, "k", config, Params().add(out).bytes());
  ASSERT_TRUE(uneven.ok());
  ASSERT_EQ(uneven->faults.size(), 1u);
  EXPECT_EQ(uneven->faults[0].kind, "invalid_launch");
}

TEST_F(ControlTest, BrxIdxJumpsPerLaneAndReconverges) {
  ModuleHandle m = load(per_thread(R"(
  rem.u32 %r2, %r1, 3;
  brx.idx %r2, TARGETS;
TARGETS: .branchtargets L0, L1, L2;
L0:
  mov.u32 %r9, 10;
  bra.uni JOIN;
L1:
  mov.u32 %r9, 20;
  bra.uni JOIN;
L2:
  mov.u32 %r9, 30;
JOIN:
  activemask.b32 %r3;
  setp.eq.u32 %p1, %r3, -1;
  selp.u32 %r4, 1000, 0, %p1;
  add.u32 %r9, %r9, %r4;
)"));
  uint64_t out = zeros<uint32_t>(32);
  LaunchReport r = run(m, "k", {1}, {32}, Params().add(out));
  std::vector<uint32_t> got = download<uint32_t>(out, 32);
  for (uint32_t t = 0; t < 32; ++t) EXPECT_EQ(got[t], 10 * (t % 3 + 1) + 1000) << t;
  EXPECT_EQ(r.stats.divergent_branches, 1u);
}

TEST_F(ControlTest, TimeLimitStopsARunawayKernel) {
  SimulatorOptions options;
  options.instruction_budget = 0;
  options.time_limit_seconds = 0.05;
  Device device(options);
  Result<ModuleHandle> m = device.load_module(per_thread(R"(
  mov.u32 %r9, 0;
SPIN:
  add.u32 %r9, %r9, 1;
  bra.uni SPIN;
)"));
  ASSERT_TRUE(m.ok());
  Result<uint64_t> out = device.allocate(128);
  LaunchConfig config;
  config.block = {32};
  Result<LaunchReport> r = device.launch(*m, "k", config, Params().add(*out).bytes());
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->faults.size(), 1u);
  EXPECT_EQ(r->faults[0].kind, "time_limit");
  EXPECT_LT(r->stats.seconds, 5.0);
}

// Lane 0 spins on a shared flag that lane 1, on the other side of a divergent branch, sets.
const char* const kIntraWarpSpin = R"(
.visible .entry k(.param .u64 out)
{
  .shared .align 4 .u32 flag;
  .reg .b32 %r<6>;
  .reg .b64 %rd<4>;
  .reg .pred %p<4>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r5, flag;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra WAITER;
  setp.eq.u32 %p2, %r1, 1;
  @!%p2 bra JOIN;
  mov.u32 %r3, 1;
  st.volatile.shared.u32 [%r5], %r3;
  bra.uni JOIN;
WAITER:
  ld.volatile.shared.u32 %r2, [%r5];
  setp.eq.u32 %p3, %r2, 0;
  @%p3 bra WAITER;
JOIN:
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r1;
  ret;
}
)";

TEST_F(ControlTest, IntraWarpSpinWaitLivelocksUnderTheReconvergenceStack) {
  SimulatorOptions options;
  options.instruction_budget = 200000;
  Device device(options);
  Result<ModuleHandle> m = device.load_module(ptx_module(kIntraWarpSpin));
  ASSERT_TRUE(m.ok());
  Result<uint64_t> out = device.allocate(128);
  LaunchConfig config;
  config.block = {32};
  Result<LaunchReport> r = device.launch(*m, "k", config, Params().add(*out).bytes());
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->faults.size(), 1u);
  EXPECT_EQ(r->faults[0].kind, "budget");
}

TEST_F(ControlTest, IndependentThreadSchedulingLetsTheOtherPathRun) {
  SimulatorOptions options;
  options.instruction_budget = 200000;
  options.independent_thread_scheduling = true;
  Device device(options);
  Result<ModuleHandle> m = device.load_module(ptx_module(kIntraWarpSpin));
  ASSERT_TRUE(m.ok());
  Result<uint64_t> out = device.allocate(128);
  LaunchConfig config;
  config.block = {32};
  Result<LaunchReport> r = device.launch(*m, "k", config, Params().add(*out).bytes());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->ok()) << r->faults[0].message;
  std::vector<uint32_t> got(32);
  ASSERT_TRUE(device.copy_to_host(got.data(), *out, 128).ok());
  for (uint32_t t = 0; t < 32; ++t) EXPECT_EQ(got[t], t);
}

}  // namespace
}  // namespace kiln::sim::testing
