// The static synccheck on small hand-written kernels: each check fires on the bug it names and
// stays quiet on the fixed version.
#include "kiln/check/static_synccheck.h"

#include <gtest/gtest.h>

#include <string>

#include "ptx/ptx_test_support.h"

namespace kiln::check {
namespace {

using ptx::testing::kernel;
using ptx::testing::parse_ok;

CheckReport check(const std::string& text) { return static_synccheck(parse_ok(text)); }

std::string listing(const CheckReport& r) {
  std::string out;
  for (const Finding& f : r.findings) out += to_string(f) + "\n";
  for (const std::string& n : r.notes) out += "note: " + n + "\n";
  return out;
}

// The kinds found, in PTX order.
std::vector<std::string> kinds(const CheckReport& r) {
  std::vector<std::string> out;
  for (const Finding& f : r.findings) out.emplace_back(finding_kind_name(f.kind));
  return out;
}

using Kinds = std::vector<std::string>;

TEST(StaticSynccheck, FlagsABarrierAfterAThreadDependentEarlyReturn) {
  const CheckReport r = check(
      kernel("mov.u32 %r1, %tid.x;\nsetp.ge.u32 %p1, %r1, 100;\n@%p1 ret;\nbar.sync 0;\nret;"));
  EXPECT_EQ(kinds(r), Kinds{"barrier_divergence"}) << listing(r);
  EXPECT_EQ(r.verdict, Verdict::Findings);
  EXPECT_NE(r.findings[0].message.find("early return"), std::string::npos);
  EXPECT_EQ(r.findings[0].instruction, "bar.sync \t0;");
  EXPECT_FALSE(r.findings[0].fix_hint.empty());
}

TEST(StaticSynccheck, ReportsOneFindingPerSourceLineWithEveryPtxCopy) {
  // An unrolled loop: two barriers from one .cu line.
  const std::string text = std::string(ptx::testing::kHeader) +
                           kernel(
                               ".loc 1 7 3\nmov.u32 %r1, %tid.x;\nsetp.ge.u32 %p1, %r1, 100;\n"
                               "@%p1 ret;\n.loc 1 9 5\nbar.sync 0;\n.loc 1 9 5\nbar.sync 0;\nret;")
                               .substr(ptx::testing::kHeader.size()) +
                           ".file 1 \"/run/kernel.cu\"\n";
  const CheckReport r = check(text);
  ASSERT_EQ(r.findings.size(), 1u) << listing(r);
  EXPECT_EQ(r.findings[0].source_file, "/run/kernel.cu");
  EXPECT_EQ(r.findings[0].source_line, 9u);
  EXPECT_NE(r.findings[0].message.find("Also at PTX line "), std::string::npos)
      << r.findings[0].message;
}

TEST(StaticSynccheck, AcceptsABarrierAfterAReturnOnTheBlockIndex) {
  const CheckReport r =
      check(kernel("mov.u32 %r1, %ctaid.x;\nld.param.u32 %r2, [k_n];\nsetp.ge.u32 %p1, %r1, %r2;\n"
                   "@%p1 ret;\nbar.sync 0;\nret;"));
  EXPECT_EQ(r.verdict, Verdict::Clean) << listing(r);
}

TEST(StaticSynccheck, FlagsABarrierInALoopWithAThreadDependentTripCount) {
  const CheckReport r = check(
      kernel("mov.u32 %r1, %tid.x;\nmov.u32 %r2, 0;\n$LOOP:\nbar.sync 0;\nadd.u32 %r2, %r2, 1;\n"
             "setp.lt.u32 %p1, %r2, %r1;\n@%p1 bra $LOOP;\nret;"));
  ASSERT_EQ(kinds(r), Kinds{"barrier_divergence"}) << listing(r);
  EXPECT_NE(r.findings[0].message.find("loop"), std::string::npos);
}

TEST(StaticSynccheck, AllowsANamedBarrierWithACountUnderAWarpUniformBranch) {
  const std::string body =
      "mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 128;\n@%p1 bra $DONE;\n"
      "bar.sync 1, 128;\n$DONE:\nret;";
  EXPECT_EQ(check(kernel(body)).verdict, Verdict::Clean);
  // The same barrier without a count waits for the whole block: whole warps skipping it hang.
  std::string whole = body;
  whole.replace(whole.find("bar.sync 1, 128"), 15, "bar.sync 0");
  EXPECT_EQ(kinds(check(kernel(whole))), Kinds{"barrier_divergence"});
}

TEST(StaticSynccheck, AcceptsANonAlignedBarrierThatEveryThreadReachesSomewhere) {
  // barrier.sync without .aligned may be reached by each thread at a different instruction.
  const CheckReport r =
      check(kernel("mov.u32 %r1, %tid.x;\nsetp.eq.u32 %p1, %r1, 0;\n@%p1 bra $A;\nbarrier.sync 0;\n"
                   "bra.uni $DONE;\n$A:\nbarrier.sync 0;\n$DONE:\nret;"));
  EXPECT_EQ(r.verdict, Verdict::Clean) << listing(r);
}

TEST(StaticSynccheck, FlagsANonAlignedBarrierThatSomeThreadsNeverReach) {
  // cg::this_thread_block().sync() under threadIdx.x % 2 == 0: barrier.sync without .aligned.
  const CheckReport r =
      check(kernel("mov.u32 %r1, %tid.x;\nand.b32 %r2, %r1, 1;\nsetp.eq.u32 %p1, %r2, 1;\n"
                   "@%p1 bra $DONE;\nbarrier.sync 0;\n$DONE:\nret;"));
  ASSERT_EQ(kinds(r), Kinds{"barrier_divergence"}) << listing(r);
  EXPECT_EQ(r.findings[0].severity, Severity::Error);
  EXPECT_EQ(r.findings[0].cause, "thread_dependent");
  EXPECT_NE(r.findings[0].message.find("without .aligned"), std::string::npos);
  EXPECT_NE(r.findings[0].message.find("must still arrive"), std::string::npos);
}

TEST(StaticSynccheck, FlagsANonAlignedBarrierAfterAThreadDependentEarlyReturn) {
  const CheckReport r = check(
      kernel("mov.u32 %r1, %tid.x;\nsetp.ge.u32 %p1, %r1, 100;\n@%p1 ret;\nbarrier.sync 0;\nret;"));
  ASSERT_EQ(kinds(r), Kinds{"barrier_divergence"}) << listing(r);
  EXPECT_NE(r.findings[0].message.find("early return"), std::string::npos);
}

TEST(StaticSynccheck, FlagsNonAlignedArmsThatArriveAtDifferentBarrierIds) {
  // Each arm arrives, but at barrier 1 instead of 0: the threads of the other arm never
  // arrive at barrier 0.
  const CheckReport r =
      check(kernel("mov.u32 %r1, %tid.x;\nsetp.eq.u32 %p1, %r1, 0;\n@%p1 bra $A;\nbarrier.sync 0;\n"
                   "bra.uni $DONE;\n$A:\nbarrier.sync 1;\n$DONE:\nret;"));
  EXPECT_EQ(kinds(r), (Kinds{"barrier_divergence", "barrier_divergence"})) << listing(r);
}

// The grid barrier nvcc inlines for cg::this_grid().sync() (CUDA 13, sm_90a), under `cond`
// (a predicate register; empty: unconditional).
std::string grid_sync_kernel(const std::string& setup, const std::string& cond,
                             const std::string& tail = "") {
  const std::string skip = cond.empty() ? "" : "@" + cond + " bra $DONE;\n";
  return kernel(setup + "mov.u32 %r2, %envreg2;\ncvt.u64.u32 %rd6, %r2;\n" +
                "mov.u32 %r3, %envreg1;\ncvt.u64.u32 %rd7, %r3;\n" +
                "bfi.b64 %rd1, %rd7, %rd6, 32, 32;\n" + skip +
                "setp.ne.s64 %p2, %rd1, 0;\n@%p2 bra $OK;\ntrap;\n$OK:\nbarrier.sync 0;\n"
                "mov.u32 %r6, %tid.x;\nsetp.ne.s32 %p3, %r6, 0;\n@%p3 bra $WAITED;\n"
                "add.s64 %rd9, %rd1, 4;\natom.add.release.gpu.u32 %r11, [%rd9], 1;\n"
                "$SPIN:\nld.acquire.gpu.u32 %r23, [%rd9];\nxor.b32 %r24, %r23, %r11;\n"
                "setp.gt.s32 %p5, %r24, -1;\n@%p5 bra $SPIN;\n"
                "$WAITED:\nbarrier.sync 0;\n" +
                tail + "$DONE:\nret;");
}

TEST(StaticSynccheck, FlagsAGridBarrierUnderABlockIndexCondition) {
  const CheckReport r =
      check(grid_sync_kernel("mov.u32 %r4, %ctaid.x;\nsetp.ne.s32 %p1, %r4, 0;\n", "%p1"));
  ASSERT_EQ(kinds(r), Kinds{"barrier_divergence"}) << listing(r);
  EXPECT_EQ(r.findings[0].severity, Severity::Error);
  EXPECT_EQ(r.findings[0].cause, "block_dependent");
  EXPECT_NE(r.findings[0].message.find("grid-wide barrier"), std::string::npos);
  EXPECT_NE(r.findings[0].message.find("atom.add.release.gpu.u32"), std::string::npos);
}

TEST(StaticSynccheck, FlagsAGridBarrierInALoopWithABlockDependentTripCount) {
  // for (tile = blockIdx.x; tile < 100; tile += gridDim.x) grid.sync(); blocks sync a
  // different number of times. The trap in the grid barrier must not hide the loop's branch.
  const CheckReport r = check(
      grid_sync_kernel("mov.u32 %r4, %ctaid.x;\nmov.u32 %r5, %nctaid.x;\n$LOOP:\n", "",
                       "add.u32 %r4, %r4, %r5;\nsetp.lt.u32 %p1, %r4, 100;\n@%p1 bra $LOOP;\n"));
  ASSERT_EQ(kinds(r), Kinds{"barrier_divergence"}) << listing(r);
  EXPECT_EQ(r.findings[0].cause, "block_dependent");
  EXPECT_NE(r.findings[0].message.find("loop"), std::string::npos) << r.findings[0].message;
}

TEST(StaticSynccheck, FlagsAGridBarrierUnderAThreadCondition) {
  const CheckReport r =
      check(grid_sync_kernel("mov.u32 %r4, %tid.x;\nsetp.ne.s32 %p1, %r4, 0;\n", "%p1"));
  ASSERT_FALSE(r.findings.empty()) << listing(r);
  EXPECT_EQ(r.findings[0].kind, FindingKind::BarrierDivergence);
  EXPECT_EQ(r.findings[0].cause, "thread_dependent");
  EXPECT_NE(r.findings[0].message.find("grid-wide barrier"), std::string::npos);
}

TEST(StaticSynccheck, AcceptsAGridBarrierEveryBlockReaches) {
  EXPECT_EQ(check(grid_sync_kernel("", "")).verdict, Verdict::Clean);
  // A condition on a kernel parameter is the same in every block.
  const CheckReport r =
      check(grid_sync_kernel("ld.param.u32 %r4, [k_n];\nsetp.eq.s32 %p1, %r4, 0;\n", "%p1"));
  EXPECT_EQ(r.verdict, Verdict::Clean) << listing(r);
}

// `if (*flag) return; __syncthreads();` with the flag at `address` (after `setup`).
std::string flag_guard_kernel(const std::string& setup, const std::string& address,
                              const std::string& after = "") {
  return kernel("ld.param.u64 %rd1, [k_out];\ncvta.to.global.u64 %rd2, %rd1;\n" + setup +
                "ld.global.u32 %r1, [" + address + "];\nsetp.ne.s32 %p1, %r1, 0;\n@%p1 ret;\n" +
                "bar.sync 0;\n" + after + "ret;");
}

TEST(StaticSynccheck, WarnsOnAGuardOnAWordEveryThreadReads) {
  const CheckReport r = check(flag_guard_kernel("", "%rd2"));
  ASSERT_EQ(kinds(r), Kinds{"barrier_divergence"}) << listing(r);
  EXPECT_EQ(r.findings[0].severity, Severity::Warning);
  EXPECT_EQ(r.findings[0].cause, "uniform_load_guard");
  EXPECT_NE(r.findings[0].message.find("same word"), std::string::npos);
  EXPECT_NE(r.findings[0].message.find("sim"), std::string::npos);
  EXPECT_EQ(r.verdict, Verdict::Findings);
}

TEST(StaticSynccheck, WarnsOnAUniformGuardWhenOnlyOtherPointersAreWritten) {
  // The kernel stores through another parameter's pointer and to shared memory.
  const std::string text = std::string(ptx::testing::kHeader) +
                           ".visible .entry k2(\n\t.param .u64 k2_flag,\n\t.param .u64 k2_out\n)\n"
                           "{\n\t.reg .pred %p<4>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<8>;\n"
                           "\t.shared .align 4 .b8 tile[1024];\n"
                           "ld.param.u64 %rd1, [k2_flag];\nld.param.u64 %rd3, [k2_out];\n"
                           "cvta.to.global.u64 %rd2, %rd1;\ncvta.to.global.u64 %rd4, %rd3;\n"
                           "ld.global.u32 %r1, [%rd2];\nsetp.ne.s32 %p1, %r1, 0;\n@%p1 ret;\n"
                           "mov.u32 %r2, %tid.x;\nmul.wide.u32 %rd5, %r2, 4;\n"
                           "add.s64 %rd6, %rd4, %rd5;\nst.global.u32 [%rd6], %r2;\n"
                           "st.shared.u32 [tile], %r2;\nbar.sync 0;\nret;\n}\n";
  const CheckReport r = check(text);
  ASSERT_EQ(kinds(r), Kinds{"barrier_divergence"}) << listing(r);
  EXPECT_EQ(r.findings[0].severity, Severity::Warning);
}

TEST(StaticSynccheck, KeepsAnErrorWhenTheKernelWritesTheGuardWord) {
  const CheckReport r = check(flag_guard_kernel("", "%rd2", "st.global.u32 [%rd2], 0;\n"));
  ASSERT_EQ(kinds(r), Kinds{"barrier_divergence"}) << listing(r);
  EXPECT_EQ(r.findings[0].severity, Severity::Error);
  EXPECT_EQ(r.findings[0].cause, "thread_dependent");
}

TEST(StaticSynccheck, KeepsAnErrorForAGuardOnEachThreadsOwnWord) {
  // if (data[threadIdx.x]) return;
  const CheckReport r = check(flag_guard_kernel(
      "mov.u32 %r2, %tid.x;\nmul.wide.u32 %rd3, %r2, 4;\nadd.s64 %rd4, %rd2, %rd3;\n", "%rd4"));
  ASSERT_EQ(kinds(r), Kinds{"barrier_divergence"}) << listing(r);
  EXPECT_EQ(r.findings[0].severity, Severity::Error);
  EXPECT_EQ(r.findings[0].cause, "thread_dependent");
}

TEST(StaticSynccheck, KeepsAnErrorWhenAUniformWordIsCombinedWithTheThreadIndex) {
  // if (*flag + threadIdx.x > 5) return;
  const CheckReport r =
      check(kernel("ld.param.u64 %rd1, [k_out];\ncvta.to.global.u64 %rd2, %rd1;\n"
                   "ld.global.u32 %r1, [%rd2];\nmov.u32 %r2, %tid.x;\nadd.s32 %r3, %r1, %r2;\n"
                   "setp.gt.u32 %p1, %r3, 5;\n@%p1 ret;\nbar.sync 0;\nret;"));
  ASSERT_EQ(kinds(r), Kinds{"barrier_divergence"}) << listing(r);
  EXPECT_EQ(r.findings[0].severity, Severity::Error);
}

TEST(StaticSynccheck, FlagsACallToABarrierFunctionUnderDivergence) {
  const std::string text = std::string(ptx::testing::kHeader) +
                           ".func sync_all()\n{\n\tbar.sync 0;\n\tret;\n}\n" +
                           kernel(
                               "mov.u32 %r1, %tid.x;\nsetp.eq.u32 %p1, %r1, 0;\n"
                               "@%p1 bra $DONE;\ncall.uni sync_all, ();\n$DONE:\nret;")
                               .substr(ptx::testing::kHeader.size());
  EXPECT_EQ(kinds(check(text)), Kinds{"barrier_divergence"});
}

TEST(StaticSynccheck, FlagsAFullMaskShuffleInsideALaneBranch) {
  const std::string body =
      "mov.u32 %r1, %tid.x;\nand.b32 %r2, %r1, 31;\nsetp.gt.u32 %p1, %r2, 15;\n@%p1 bra $DONE;\n"
      "mov.u32 %r3, MASK;\nshfl.sync.bfly.b32 %r4|%p2, %r1, 8, 31, %r3;\n$DONE:\nret;";
  std::string full = body, half = body;
  full.replace(full.find("MASK"), 4, "-1");
  half.replace(half.find("MASK"), 4, "65535");
  EXPECT_EQ(kinds(check(kernel(full))), Kinds{"collective_mask"});
  EXPECT_EQ(check(kernel(half)).verdict, Verdict::Clean);
}

TEST(StaticSynccheck, AcceptsAFullMaskShuffleUnderAWarpUniformBranch) {
  const CheckReport r = check(kernel(
      "mov.u32 %r1, %tid.x;\nshr.u32 %r2, %r1, 5;\nsetp.ne.u32 %p1, %r2, 0;\n@%p1 bra $DONE;\n"
      "shfl.sync.bfly.b32 %r4|%p2, %r1, 8, 31, -1;\n$DONE:\nret;"));
  EXPECT_EQ(r.verdict, Verdict::Clean) << listing(r);
}

TEST(StaticSynccheck, FlagsAnAlignedCollectiveUnderLaneDivergence) {
  const std::string body =
      "mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, LIMIT;\n@%p1 bra $DONE;\n"
      "ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r2}, [%r1];\n$DONE:\nret;";
  std::string lanes = body, warps = body;
  lanes.replace(lanes.find("LIMIT"), 5, "16");
  warps.replace(warps.find("LIMIT"), 5, "64");
  EXPECT_EQ(kinds(check(kernel(lanes))), Kinds{"collective_divergence"});
  EXPECT_EQ(check(kernel(warps)).verdict, Verdict::Clean);
}

TEST(StaticSynccheck, FlagsANamedBarrierUsedWithTwoCounts) {
  const CheckReport r = check(
      kernel("mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 128;\n@%p1 bra $A;\nbar.sync 1, 256;\n"
             "bra.uni $DONE;\n$A:\nbar.arrive 1, 128;\n$DONE:\nret;"));
  ASSERT_EQ(kinds(r), Kinds{"named_barrier_mismatch"}) << listing(r);
  EXPECT_NE(r.findings[0].message.find("256"), std::string::npos);
}

TEST(StaticSynccheck, FlagsABarrierCountThatIsNotWholeWarps) {
  EXPECT_EQ(kinds(check(kernel("mov.u32 %r1, 80;\nbar.sync 1, %r1;\nret;"))),
            Kinds{"named_barrier_mismatch"});
  EXPECT_EQ(check(kernel("mov.u32 %r1, 96;\nbar.sync 1, %r1;\nret;")).verdict, Verdict::Clean);
}

// An mbarrier in shared memory, initialized by thread 0, then used by everyone.
std::string mbarrier_kernel(std::string_view after_init, std::string_view use) {
  std::string body =
      ".shared .align 8 .b64 bar;\nmov.u32 %r1, %tid.x;\nmov.u32 %r2, bar;\n"
      "setp.ne.u32 %p1, %r1, 0;\n@%p1 bra $SKIP;\nmbarrier.init.shared::cta.b64 [%r2], 1;\n";
  body += after_init;
  body += "$SKIP:\n";
  body += use;
  body += "ret;";
  return kernel(body);
}

TEST(StaticSynccheck, AcceptsAnMbarrierInitializedAndPublished) {
  const CheckReport r =
      check(mbarrier_kernel("fence.mbarrier_init.release.cluster;\n",
                            "bar.sync 0;\nmbarrier.arrive.shared::cta.b64 %rd1, [%r2];\n"));
  EXPECT_EQ(r.verdict, Verdict::Clean) << listing(r);
}

TEST(StaticSynccheck, FlagsAnMbarrierUsedWithoutInit) {
  const CheckReport r =
      check(kernel(".shared .align 8 .b64 bar;\nmov.u32 %r2, bar;\n"
                   "mbarrier.arrive.shared::cta.b64 %rd1, [%r2];\n"
                   "mbarrier.test_wait.shared::cta.b64 %p1, [%r2], %rd1;\nret;"));
  // Reported once, at the first use.
  EXPECT_EQ(kinds(r), Kinds{"mbarrier_uninitialized"}) << listing(r);
}

// A cluster kernel arriving on its peer's copy of the barrier (mapa): the address traces to
// the same variable, whose init and fence are checked like the local one's.
TEST(StaticSynccheck, AcceptsAPeerMbarrierReachedThroughMapa) {
  const CheckReport r =
      check(mbarrier_kernel("fence.mbarrier_init.release.cluster;\n",
                            "barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n"
                            "mapa.shared::cluster.u32 %r3, %r2, 1;\n"
                            "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r3];\n"));
  EXPECT_EQ(r.verdict, Verdict::Clean) << listing(r);
}

TEST(StaticSynccheck, FlagsAPeerMbarrierThroughMapaWithoutInit) {
  const CheckReport r =
      check(kernel(".shared .align 8 .b64 bar;\nmov.u32 %r2, bar;\n"
                   "mapa.shared::cluster.u32 %r3, %r2, 1;\n"
                   "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r3];\nret;"));
  EXPECT_EQ(kinds(r), Kinds{"mbarrier_uninitialized"}) << listing(r);
}

TEST(StaticSynccheck, FlagsAnMbarrierUsedBeforeTheBarrierThatPublishesItsInit) {
  const CheckReport r =
      check(mbarrier_kernel("", "mbarrier.arrive.shared::cta.b64 %rd1, [%r2];\nbar.sync 0;\n"));
  EXPECT_EQ(kinds(r), Kinds{"mbarrier_init_fence"}) << listing(r);
}

TEST(StaticSynccheck, FlagsABulkCopyOnAnMbarrierWithoutTheAsyncProxyFence) {
  const std::string copy =
      "bar.sync 0;\nld.param.u64 %rd2, [k_out];\n"
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 128;\n"
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd2], 128, "
      "[%r2];\n";
  EXPECT_EQ(kinds(check(mbarrier_kernel("", copy))), Kinds{"mbarrier_init_fence"});
  EXPECT_EQ(check(mbarrier_kernel("fence.proxy.async.shared::cta;\n", copy)).verdict,
            Verdict::Clean);
}

TEST(StaticSynccheck, FlagsABulkCopyOnAnMbarrierNothingArms) {
  const CheckReport r = check(mbarrier_kernel(
      "fence.proxy.async.shared::cta;\n",
      "bar.sync 0;\nld.param.u64 %rd2, [k_out];\n"
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd2], 128, "
      "[%r2];\n"));
  EXPECT_EQ(kinds(r), Kinds{"bulk_copy_no_expect_tx"}) << listing(r);
}

std::string cp_async_kernel(std::string_view between) {
  std::string body =
      ".shared .align 16 .b8 tile[4096];\nmov.u32 %r1, %tid.x;\nshl.b32 %r2, %r1, 4;\n"
      "mov.u32 %r3, tile;\nadd.u32 %r4, %r3, %r2;\nld.param.u64 %rd1, [k_out];\n"
      "cp.async.cg.shared.global [%r4], [%rd1], 16;\ncp.async.commit_group;\n";
  body += between;
  body += "xor.b32 %r5, %r4, 16;\nld.shared.f32 %f1, [%r5];\nret;";
  return kernel(body);
}

TEST(StaticSynccheck, FlagsCpAsyncDataReadWithoutAWait) {
  EXPECT_EQ(kinds(check(cp_async_kernel(""))), Kinds{"async_copy_unwaited"});
  // wait_group 1 with one group committed waits for nothing.
  EXPECT_EQ(kinds(check(cp_async_kernel("cp.async.wait_group 1;\nbar.sync 0;\n"))),
            Kinds{"async_copy_unwaited"});
  EXPECT_EQ(check(cp_async_kernel("cp.async.wait_group 0;\nbar.sync 0;\n")).verdict,
            Verdict::Clean);
}

TEST(StaticSynccheck, FlagsCpAsyncDataOfOtherThreadsReadWithoutABarrier) {
  EXPECT_EQ(kinds(check(cp_async_kernel("cp.async.wait_all;\n"))), Kinds{"async_copy_unwaited"});
}

std::string wgmma_kernel(std::string_view before, std::string_view after) {
  std::string body = "mov.f32 %f1, 0f00000000;\nld.param.u64 %rd1, [k_out];\n";
  body += before;
  body +=
      "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, %rd1, %rd1, "
      "1, 1, 1, 0, 0;\n";
  body += after;
  body += "st.global.f32 [%rd1], %f1;\nret;";
  return kernel(body);
}

TEST(StaticSynccheck, ChecksTheWgmmaFenceCommitAndWait) {
  const std::string fence = "wgmma.fence.sync.aligned;\n";
  const std::string commit_wait =
      "wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n";
  EXPECT_EQ(check(wgmma_kernel(fence, commit_wait)).verdict, Verdict::Clean);
  EXPECT_EQ(kinds(check(wgmma_kernel("", commit_wait))), Kinds{"wgmma_fence"});
  EXPECT_EQ(kinds(check(wgmma_kernel(fence, "wgmma.commit_group.sync.aligned;\n"))),
            Kinds{"wgmma_fence"});
  EXPECT_EQ(kinds(check(wgmma_kernel(fence, ""))), Kinds{"wgmma_fence"});
}

TEST(StaticSynccheck, SaysIncompleteWhenACalleeHasNoBody) {
  const std::string text =
      std::string(ptx::testing::kHeader) + ".extern .func helper();\n" +
      kernel("call.uni helper, ();\nret;").substr(ptx::testing::kHeader.size());
  const CheckReport r = check(text);
  EXPECT_EQ(r.verdict, Verdict::Incomplete) << listing(r);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("helper"), std::string::npos);
}

TEST(StaticSynccheck, ChecksOnlyTheFunctionsAsked) {
  SyncCheckOptions only_other;
  only_other.functions = {"not_k"};
  const CheckReport r = static_synccheck(
      parse_ok(kernel("mov.u32 %r1, %tid.x;\nsetp.ge.u32 %p1, %r1, 100;\n@%p1 ret;\n"
                      "bar.sync 0;\nret;")),
      only_other);
  EXPECT_EQ(r.verdict, Verdict::Clean);
}

}  // namespace
}  // namespace kiln::check
