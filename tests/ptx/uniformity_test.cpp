#include "kiln/ptx/uniformity.h"

#include <gtest/gtest.h>

#include <memory>

#include "graphs.h"
#include "kiln/ptx/function_analysis.h"

namespace kiln::ptx {
namespace {

using testing::find;
using testing::kernel;
using testing::parse_ok;
using testing::reg;

struct Analyzed {
  Module module;
  std::unique_ptr<FunctionAnalysis> a;
  const Function& f() const { return *a->function; }
  const UniformityAnalysis& u() const { return a->uniformity; }
  Uniformity at(std::string_view reg_name, std::string_view inst_prefix, int nth = 0) const {
    return u().level(reg(f(), reg_name), find(f(), inst_prefix, nth));
  }
};

Analyzed analyze(const std::string& text, const UniformityOptions& options = {}) {
  Analyzed out;
  out.module = parse_ok(text);
  out.a = analyze_function(testing::only_body(out.module), options);
  return out;
}

constexpr Uniformity kUniform = Uniformity::Uniform;
constexpr Uniformity kWarp = Uniformity::WarpUniform;
constexpr Uniformity kDivergent = Uniformity::Divergent;

TEST(Uniformity, MakesABranchOnTidDivergent) {
  Analyzed x = analyze(testing::diamond("%tid.x"));
  EXPECT_EQ(x.at("%r1", "setp"), kDivergent);
  EXPECT_TRUE(x.u().is_branch_divergent(0));
  ASSERT_EQ(x.u().divergent_branches().size(), 1u);
  const DivergentBranch& b = x.u().divergent_branches()[0];
  EXPECT_EQ(b.reconvergence, 3u);
  EXPECT_EQ(b.region, (std::vector<BlockId>{1, 2}));
  EXPECT_EQ(b.joins, (std::vector<BlockId>{3}));
}

TEST(Uniformity, KeepsABranchOnCtaidUniform) {
  Analyzed x = analyze(testing::diamond("%ctaid.x"));
  EXPECT_EQ(x.at("%r1", "setp"), kUniform);
  EXPECT_EQ(x.u().branch_level(0), kUniform);
  EXPECT_TRUE(x.u().divergent_branches().empty());
  // With the branch uniform, the value picked in the arms stays uniform at the join.
  EXPECT_EQ(x.at("%r2", "st.global"), kUniform);
  EXPECT_FALSE(x.u().executed_under_divergent_control(find(x.f(), "mov.u32", 1)));
}

TEST(Uniformity, KeepsKernelParametersUniform) {
  Analyzed x =
      analyze(kernel("ld.param.u32 %r1, [k_n];\nmov.u32 %r2, %ntid.x;\nmov.u32 %r3, %nctaid.y;\n"
                     "mad.lo.s32 %r4, %r1, %r2, %r3;\nsetp.lt.s32 %p1, %r4, 100;\n@%p1 bra $END;\n"
                     "add.s32 %r5, %r4, 1;\n$END:\nret;"));
  EXPECT_EQ(x.at("%r4", "setp"), kUniform);
  EXPECT_EQ(x.u().branch_level(0), kUniform);
  EXPECT_EQ(x.u().result_level(find(x.f(), "ld.param")), kUniform);
}

TEST(Uniformity, PropagatesThroughControlDependenceToTheJoin) {
  // Both arms assign a constant, yet which constant depends on the thread.
  Analyzed x = analyze(testing::diamond("%tid.x"));
  const InstructionId else_mov = find(x.f(), "mov.u32", 1);
  const InstructionId then_mov = find(x.f(), "mov.u32", 2);
  EXPECT_EQ(x.u().result_level(else_mov), kUniform);
  EXPECT_EQ(x.u().result_level(then_mov), kUniform);
  EXPECT_EQ(x.at("%r2", "st.global"), kDivergent);
  EXPECT_TRUE(x.u().executed_under_divergent_control(else_mov));
  EXPECT_TRUE(x.u().executed_under_divergent_control(then_mov));
  EXPECT_FALSE(x.u().executed_under_divergent_control(find(x.f(), "st.global")));
}

TEST(Uniformity, TracksTemporalDivergenceOutOfALoopWithAThreadDependentTripCount) {
  Analyzed x = analyze(testing::counted_loop("%tid.x"));
  EXPECT_TRUE(x.u().is_branch_divergent(1));
  // Inside the loop the counters advance in lockstep for the threads still looping...
  EXPECT_EQ(x.at("%r3", "add.u32", 1), kUniform);
  EXPECT_TRUE(x.u().executed_under_divergent_control(find(x.f(), "add.u32", 1)));
  // ...but after it, threads that left at different iterations hold different counts.
  EXPECT_EQ(x.at("%r3", "st.global"), kDivergent);
  EXPECT_FALSE(x.u().executed_under_divergent_control(find(x.f(), "st.global")));
}

TEST(Uniformity, KeepsALoopWithAUniformTripCountUniform) {
  Analyzed x = analyze(testing::counted_loop("%ctaid.x"));
  EXPECT_FALSE(x.u().is_branch_divergent(1));
  EXPECT_EQ(x.at("%r3", "st.global"), kUniform);
}

TEST(Uniformity, TreatsLoadsFromSharedAndGlobalMemoryAsDivergent) {
  Analyzed x = analyze(kernel(
      ".shared .align 4 .b8 s[64];\n.const .align 4 .b8 c[64];\n"
      "ld.shared.u32 %r1, [s];\nld.global.u32 %r2, [%rd1];\nld.global.nc.u32 %r3, [%rd1];\n"
      "ld.const.u32 %r4, [c];\nld.local.u32 %r5, [%rd1];\nld.u32 %r6, [%rd1];\n"
      "atom.global.add.u32 %r7, [%rd1], 1;\nmov.u32 %r8, %laneid;\nld.const.u32 %r9, [%r8];"));
  const UniformityAnalysis& u = x.u();
  EXPECT_EQ(u.result_level(0), kDivergent);  // ld.shared
  EXPECT_EQ(u.result_level(1), kDivergent);  // ld.global (other threads may write)
  EXPECT_EQ(u.result_level(2), kUniform);    // ld.global.nc from a uniform address
  EXPECT_EQ(u.result_level(3), kUniform);    // ld.const
  EXPECT_EQ(u.result_level(4), kDivergent);  // ld.local: per-thread memory
  EXPECT_EQ(u.result_level(5), kDivergent);  // generic
  EXPECT_EQ(u.result_level(6), kDivergent);  // atomics
  EXPECT_EQ(u.result_level(8), kDivergent);  // ld.const from a per-lane address
}

TEST(Uniformity, MakesWarpCollectivesWarpUniform) {
  Analyzed x =
      analyze(kernel("mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 5;\n"
                     "vote.sync.ballot.b32 %r2, %p1, -1;\n"
                     "vote.sync.any.pred %p2, %p1, -1;\n"
                     "activemask.b32 %r3;\n"
                     "shfl.sync.idx.b32 %r4, %r1, 0, 31, -1;\n"
                     "shfl.sync.bfly.b32 %r5, %r1, 1, 31, -1;\n"
                     "shfl.sync.bfly.b32 %r6, %r3, 1, 31, -1;\n"
                     "redux.sync.add.u32 %r7, %r1, -1;\n"
                     "match.any.sync.b32 %r8, %r1, -1;\n"
                     "mov.u32 %r9, %warpid;\n"
                     "shfl.sync.down.b32 %r10|%p3, %r1, 1, 31, -1;\nret;"));
  const UniformityAnalysis& u = x.u();
  EXPECT_EQ(u.result_level(2), kWarp);        // ballot
  EXPECT_EQ(u.result_level(3), kWarp);        // vote.any of a divergent predicate
  EXPECT_EQ(u.result_level(4), kWarp);        // activemask
  EXPECT_EQ(u.result_level(5), kWarp);        // broadcast from lane 0
  EXPECT_EQ(u.result_level(6), kDivergent);   // butterfly of a per-lane value
  EXPECT_EQ(u.result_level(7), kWarp);        // butterfly of a warp-uniform value
  EXPECT_EQ(u.result_level(8), kWarp);        // redux
  EXPECT_EQ(u.result_level(9), kDivergent);   // match.any
  EXPECT_EQ(u.result_level(10), kWarp);       // %warpid
  EXPECT_EQ(x.at("%p3", "ret"), kDivergent);  // in range of shfl.down: per lane
}

TEST(Uniformity, MakesBlockReductionsUniform) {
  // __syncthreads_count(tid < 5): every thread of the CTA gets the same count.
  Analyzed x = analyze(
      kernel("mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 5;\nbar.red.popc.u32 %r2, 0, %p1;\n"
             "setp.eq.u32 %p2, %r2, 0;\n@%p2 bra $END;\nbar.sync 0;\n$END:\nret;"));
  EXPECT_EQ(x.u().result_level(2), kUniform);
  EXPECT_EQ(x.u().branch_level(0), kUniform);
}

TEST(Uniformity, SeparatesWarpUniformBranchesFromDivergentOnes) {
  Analyzed x =
      analyze(kernel("mov.u32 %r1, %warpid;\nsetp.eq.u32 %p1, %r1, 0;\n@%p1 bra $SKIP;\n"
                     "bar.sync 0;\n$SKIP:\nret;"));
  EXPECT_EQ(x.u().branch_level(0), kWarp);
  EXPECT_FALSE(x.u().is_branch_divergent(0));
  const InstructionId bar = find(x.f(), "bar.sync");
  EXPECT_EQ(x.u().control_level(bar), kWarp);  // whole warps skip the barrier: still suspect
  EXPECT_FALSE(x.u().executed_under_divergent_control(bar));
}

TEST(Uniformity, TreatsWarpAndWarpGroupIndicesAsWarpUniform) {
  const std::string body =
      "mov.u32 %r1, %tid.x;\nshr.u32 %r2, %r1, 5;\nand.b32 %r3, %r1, -128;\n"
      "div.u32 %r4, %r1, 128;\nbfe.u32 %r5, %r1, 7, 2;\nshr.u32 %r6, %r1, 4;\n"
      "add.u32 %r7, %r1, 1;\nshr.u32 %r8, %r7, 5;\nmov.u32 %r9, %tid.y;\n"
      "cvt.u64.u32 %rd1, %r1;\nshr.u64 %rd2, %rd1, 7;\n"
      "setp.eq.u32 %p1, %r3, 0;\n@%p1 bra $PRODUCER;\nbar.sync 1, 256;\n$PRODUCER:\nret;";
  Analyzed x = analyze(kernel(body));
  const UniformityAnalysis& u = x.u();
  EXPECT_EQ(u.result_level(0), kDivergent);  // %tid.x itself
  EXPECT_EQ(u.result_level(1), kWarp);       // tid / 32: the warp index
  EXPECT_EQ(u.result_level(2), kWarp);       // tid & -128: the warp group's first thread
  EXPECT_EQ(u.result_level(3), kWarp);       // tid / 128
  EXPECT_EQ(u.result_level(4), kWarp);       // bits 7..8
  EXPECT_EQ(u.result_level(5), kDivergent);  // tid / 16 splits a warp
  EXPECT_EQ(u.result_level(7), kDivergent);  // (tid + 1) / 32 straddles warps
  EXPECT_EQ(u.result_level(8), kWarp);       // %tid.y
  EXPECT_EQ(u.result_level(10), kWarp);      // widened, then / 128
  EXPECT_EQ(u.branch_level(0), kWarp);
  EXPECT_EQ(u.control_level(find(x.f(), "bar.sync")), kWarp);

  UniformityOptions unaligned;
  unaligned.warp_aligned_x = false;
  Analyzed y = analyze(kernel(body), unaligned);
  EXPECT_EQ(y.u().result_level(1), kDivergent);
  EXPECT_EQ(y.u().result_level(8), kDivergent);
  EXPECT_TRUE(y.u().is_branch_divergent(0));
}

TEST(Uniformity, TreatsTidComparedWithAWarpBoundaryAsWarpUniform) {
  const std::string body =
      "mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 128;\nsetp.gt.u32 %p2, %r1, 127;\n"
      "setp.ge.s32 %p3, %r1, 64;\nsetp.lt.u32 %p4, %r1, 100;\nsetp.eq.u32 %p5, %r1, 0;\n"
      "and.b32 %r2, %r1, 31;\nsetp.lt.u32 %p6, %r2, 16;\nret;";
  Analyzed x = analyze(kernel(body));
  EXPECT_EQ(x.u().result_level(1), kWarp);       // tid < 128: warps 0-3
  EXPECT_EQ(x.u().result_level(2), kWarp);       // tid > 127
  EXPECT_EQ(x.u().result_level(3), kWarp);       // tid >= 64
  EXPECT_EQ(x.u().result_level(4), kDivergent);  // tid < 100 splits warp 3
  EXPECT_EQ(x.u().result_level(5), kDivergent);  // tid == 0
  EXPECT_EQ(x.u().result_level(7), kDivergent);  // lane < 16

  UniformityOptions unaligned;
  unaligned.warp_aligned_x = false;
  EXPECT_EQ(analyze(kernel(body), unaligned).u().result_level(1), kDivergent);
}

TEST(Uniformity, LetsReqntidDecideWhetherRowsAreWarpAligned) {
  std::string text = kernel("mov.u32 %r1, %tid.y;\nret;");
  text.replace(text.find("\n{"), 2, "\n.reqntid 48, 4, 1\n{");
  Analyzed x = analyze(text);
  EXPECT_EQ(x.u().result_level(0), kDivergent);
}

TEST(Uniformity, RaisesAGuardedWriteToTheGuardsLevel) {
  Analyzed x = analyze(kernel(
      "mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 5;\nmov.u32 %r2, 0;\n@%p1 mov.u32 %r2, 1;\n"
      "add.u32 %r3, %r2, 1;"));
  EXPECT_EQ(x.at("%r2", "add.u32"), kDivergent);
  EXPECT_EQ(x.u().control_level(3), kDivergent);
  EXPECT_EQ(x.u().control_level(2), kUniform);
}

TEST(Uniformity, TreatsCodeAfterADivergentReturnAsDivergentlyControlled) {
  Analyzed x = analyze(
      kernel("mov.u32 %r1, %tid.x;\nsetp.ge.u32 %p1, %r1, 100;\n@%p1 ret;\nbar.sync 0;\nret;"));
  EXPECT_TRUE(x.u().is_branch_divergent(0));
  EXPECT_TRUE(x.u().executed_under_divergent_control(find(x.f(), "bar.sync")));
}

TEST(Uniformity, TreatsDeviceFunctionParametersAsDivergentUnlessTold) {
  const std::string text = testing::device_function(
      "ld.param.u32 %r1, [g_a];\nsetp.eq.u32 %p1, %r1, 0;\n@%p1 bra $END;\nadd.u32 %r2, %r1, 1;\n"
      "$END:\nret;");
  Analyzed conservative = analyze(text);
  EXPECT_EQ(conservative.u().result_level(0), kDivergent);
  EXPECT_TRUE(conservative.u().is_branch_divergent(0));
  UniformityOptions options;
  options.function_params_uniform = true;
  Analyzed trusting = analyze(text, options);
  EXPECT_EQ(trusting.u().result_level(0), kUniform);
  EXPECT_FALSE(trusting.u().is_branch_divergent(0));
}

TEST(Uniformity, FindsTheDivergentBarrierInTheCorpusKernel) {
  Module m = parse_ok(testing::committed("divergent_barrier.sm80.ptx"));
  const Function& wrong = *m.find_function("_Z17divergent_barrierPf");
  const Function& right = *m.find_function("_Z15uniform_barrierPfi");
  auto bad = analyze_function(wrong);
  auto good = analyze_function(right);
  const InstructionId inner_bar = find(wrong, "bar.sync", 0);
  const InstructionId outer_bar = find(wrong, "bar.sync", 1);
  // if (threadIdx.x < 64): whole warps skip the barrier, so it is warp-uniform, still a bug.
  EXPECT_EQ(bad->uniformity.control_level(inner_bar), kWarp);
  EXPECT_EQ(bad->uniformity.control_level(outer_bar), kUniform);
  EXPECT_EQ(good->uniformity.control_level(find(right, "bar.sync", 0)), kUniform);
  EXPECT_EQ(good->uniformity.control_level(find(right, "bar.sync", 1)), kUniform);
}

TEST(Uniformity, ClassifiesTheLoopsOfTheCorpusKernel) {
  // triangle: for (i < threadIdx.x) divergent; for (j < n) uniform; while (k > 1) on k = tid.
  Module m = parse_ok(testing::committed("loops.sm80.ptx"));
  const Function& f = *m.find_function("_Z8trianglePKfPfi");
  auto a = analyze_function(f);
  size_t divergent = 0, uniform = 0;
  for (const Loop& loop : a->loops.loops()) {
    bool any_divergent_exit = false;
    for (BlockId b : loop.blocks) {
      if (a->uniformity.is_branch_divergent(b)) any_divergent_exit = true;
    }
    (any_divergent_exit ? divergent : uniform)++;
  }
  EXPECT_GE(divergent, 2u);
  EXPECT_GE(uniform, 1u);
}

}  // namespace
}  // namespace kiln::ptx
