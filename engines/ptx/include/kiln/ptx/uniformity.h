// Uniformity (divergence) analysis: which register values, branches and instructions depend on
// the thread executing them, within one CTA.
//
// Levels, ordered: Uniform < WarpUniform < Divergent.
//   Uniform      the same in every thread of the CTA: immediates, symbol addresses, %ctaid,
//                %nctaid, %ntid, %cluster_*, %smid, kernel parameters (ld.param of an .entry
//                parameter), ld.const, ld.global.nc, ldu and tex from a uniform address, and
//                CTA-wide reductions (bar.red, i.e. __syncthreads_count/and/or).
//   WarpUniform  the same in every thread of a warp but possibly different between warps:
//                %warpid, activemask, vote.ballot (and vote.any/all/uni of a non-uniform
//                predicate), redux.sync, match.all, shfl.sync.idx from a warp-uniform lane,
//                any shuffle of a warp-uniform value, and (with warp-aligned rows, the default)
//                %tid.y, %tid.z and any value built from %tid.x by shifts, masks, bit-field
//                extracts and power-of-two multiplies and divides that drops the lane bits
//                0..4: tid >> 5, tid / 128, tid & -32, (tid >> 1) & ~63, and %tid.x compared
//                with a warp boundary (tid < 128, tid > 127). A branch at this level
//                never splits a warp but does split the CTA: a CTA barrier (bar.sync) under it is
//                still suspect, while warp-synchronous code (shfl, vote, mma) is fine. Queries
//                named is_divergent/executed_under_divergent_control mean the Divergent level only;
//                use level()/control_level() to see WarpUniform.
//   Divergent    may differ between threads of one warp: %tid, %laneid, %lanemask_*, %clock*,
//                %globaltimer*, loads from memory other threads write (ld.shared, ld.global
//                without .nc, ld.local, generic ld, suld), atomics, other shuffles, match.any,
//                elect, mbarrier results, ldmatrix/mma/wgmma fragments, call results, and the
//                parameters of a .func (unless options say otherwise).
//
// Values combine by data dependence (the maximum of the operands) and by control dependence.
// A branch whose predicate (or brx.idx index) is not Uniform splits threads until its
// reconvergence point, its immediate post-dominator; the blocks reached from the branch before
// that point are its influence region, executed under that level of control. A register
// written in the region is raised to the branch's level
//   - at each join: a block with two or more predecessors that paths from two different
//     successors of the branch reach, inside the region or at the reconvergence point
//     (registers written on the way to that join only), and
//   - at the exits of every loop that holds the branch but not its reconvergence point
//     (temporal divergence: threads leave such a loop at different iterations).
// A guarded write (@%p mov) raises the register to the level of %p; a guarded ret/exit is a
// branch to the exit, so code after a divergent early return runs under divergent control.
// Branch levels feed back into values, so the analysis iterates to a fixed point.
//
// Results are relative to the function's entry: for a .func, whether its caller is itself
// divergent is not known here.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/ptx/cfg.h"
#include "kiln/ptx/dominators.h"
#include "kiln/ptx/function.h"

namespace kiln::ptx {

class LoopInfo;

enum class Uniformity : uint8_t { Uniform = 0, WarpUniform = 1, Divergent = 2 };

std::string_view uniformity_name(Uniformity level);  // "uniform", "warp-uniform", "divergent"

struct UniformityOptions {
  // Assume blockDim.x is a multiple of 32, so a warp is 32 consecutive %tid.x of one (y, z):
  // %tid.y, %tid.z, %tid.x / 32 (>> 5, & ~31, and coarser) are then warp-uniform, as in
  // warp-specialized code (warp = tid / 32, warp group = tid / 128). A kernel's .reqntid
  // overrides this either way. Turn it off for kernels launched with other x sizes.
  bool warp_aligned_x = true;
  // Treat a load from a uniform address as uniform even when other threads may write that
  // memory (ld.global without .nc, ld.shared, generic ld), as compilers do for race-free code.
  // Off by default: a value another thread may be writing can differ between the threads
  // reading it. ld.local (per-thread memory) stays divergent either way.
  bool loads_from_uniform_addresses_uniform = false;
  // Treat the parameters of a .func as uniform (when every call site is known to pass uniform
  // values). Kernel (.entry) parameters are always uniform.
  bool function_params_uniform = false;
};

struct DivergentBranch {
  BlockId block = 0;  // the block the branch ends
  Uniformity level = Uniformity::Divergent;
  BlockId reconvergence = 0;    // immediate post-dominator (may be the virtual exit)
  std::vector<BlockId> region;  // influence region, sorted
  std::vector<BlockId> joins;   // blocks where paths from different successors meet, sorted
};

class UniformityAnalysis {
 public:
  // Keeps references to all three arguments; they must outlive the analysis.
  static UniformityAnalysis compute(const Function& function, const ControlFlowGraph& cfg,
                                    const DominatorTree& post_dominators,
                                    const UniformityOptions& options = {});

  // The level of `reg`'s value as read by instruction `at` (before it executes).
  Uniformity level(RegisterId reg, InstructionId at) const;
  // The level of the value `at` writes (the maximum over its destinations); Uniform if none.
  Uniformity result_level(InstructionId at) const { return result_[at]; }
  bool is_divergent(RegisterId reg, InstructionId at) const {
    return level(reg, at) == Uniformity::Divergent;
  }

  // The level of the branch that ends `block` (its guard or brx.idx index); Uniform when the
  // block does not end in a conditional or indirect branch, ret or exit.
  Uniformity branch_level(BlockId block) const { return branch_[block]; }
  bool is_branch_divergent(BlockId block) const { return branch_[block] == Uniformity::Divergent; }

  // The highest level of the branches whose influence region holds `at`'s block, combined with
  // `at`'s own guard: Divergent means some threads of a warp may skip `at` while others run
  // it; WarpUniform means whole warps may skip it.
  Uniformity control_level(InstructionId at) const;
  bool executed_under_divergent_control(InstructionId at) const {
    return control_level(at) == Uniformity::Divergent;
  }
  // Like control_level but for a whole block (no guard).
  Uniformity block_control_level(BlockId block) const { return block_control_[block]; }

  // Every branch above Uniform with its region, joins and reconvergence point.
  const std::vector<DivergentBranch>& divergent_branches() const { return branches_; }
  // How many fixed-point rounds the analysis took (for tests and benchmarks).
  uint32_t rounds() const { return rounds_; }

 private:
  // A block state entry: a public level, "unset", or a %tid.x bit pattern (thread_value.h).
  using Value = uint32_t;

  Value operand_value(const Operand& op, const std::vector<Value>& state) const;
  Uniformity load_level(const Instruction& inst, Uniformity address) const;
  Value compute_result(const Instruction& inst, const std::vector<Value>& state) const;
  // Applies `id` to `state`; returns the level it writes (Uniform when it writes nothing).
  Uniformity apply(InstructionId id, std::vector<Value>& state) const;
  // Raises block states to the fixed point for the current joins. Levels only rise between
  // rounds, so each round resumes from the last one, revisiting only the `pending_` blocks.
  void propagate_values();
  bool update_branches();
  void compute_regions(const LoopInfo& loops);

  const Function* function_ = nullptr;
  const ControlFlowGraph* cfg_ = nullptr;
  const DominatorTree* pdom_ = nullptr;
  UniformityOptions options_;
  bool warp_aligned_x_ = true;
  uint32_t register_count_ = 0;
  std::vector<std::vector<Value>> block_in_;  // per block, per register
  std::vector<std::vector<Value>> block_out_;
  std::vector<std::vector<std::pair<RegisterId, Uniformity>>> join_taint_;  // per block
  std::vector<std::vector<RegisterId>> block_defs_;      // registers written, per block
  std::vector<Uniformity> result_;                       // per instruction
  std::vector<Uniformity> guard_;                        // per instruction
  std::vector<uint32_t> use_begin_;                      // per instruction, into uses_
  std::vector<std::pair<RegisterId, Uniformity>> uses_;  // levels of registers read
  std::vector<Uniformity> branch_;
  std::vector<Uniformity> block_control_;
  std::vector<DivergentBranch> branches_;
  std::vector<uint8_t> pending_;  // per block: its input may have changed
  std::vector<uint8_t> visited_;  // per block: processed at least once
  uint32_t rounds_ = 0;
};

}  // namespace kiln::ptx
