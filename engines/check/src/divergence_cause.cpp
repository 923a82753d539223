#include "divergence_cause.h"

#include <algorithm>

namespace kiln::check {
namespace {

bool region_contains(const ptx::DivergentBranch& branch, ptx::BlockId block) {
  return std::binary_search(branch.region.begin(), branch.region.end(), block);
}

// The loop holding both `branch_block` and `block` that `branch_block` exits, if any.
bool exits_enclosing_loop(const FunctionContext& context, ptx::BlockId branch_block,
                          ptx::BlockId block) {
  const ptx::LoopInfo& loops = context.analysis().loops;
  for (uint32_t l = loops.innermost(branch_block); l != ptx::kNone; l = loops.loops()[l].parent) {
    const ptx::Loop& loop = loops.loops()[l];
    if (!loop.contains(block)) continue;
    for (ptx::BlockId s : context.cfg().block(branch_block).successors) {
      if (!loop.contains(s)) return true;
    }
  }
  return false;
}

}  // namespace

DivergenceCause divergence_cause(const FunctionContext& context, ptx::InstructionId at,
                                 ptx::Uniformity allowed) {
  const ptx::Instruction& inst = context.instruction(at);
  const ptx::UniformityAnalysis& u = context.uniformity();
  if (inst.guard && u.level(inst.guard->reg, at) > allowed) {
    return {"its guard predicate depends on the thread", ptx::kNone};
  }
  const ptx::BlockId block = context.cfg().block_of(at);
  const ptx::DivergentBranch* best = nullptr;
  for (const ptx::DivergentBranch& branch : u.divergent_branches()) {
    if (branch.level <= allowed || !region_contains(branch, block)) continue;
    // Prefer the branch closest to the instruction: the one with the smallest region.
    if (best == nullptr || branch.region.size() < best->region.size()) best = &branch;
  }
  if (best == nullptr) return {"a thread-dependent branch before it", ptx::kNone};
  const ptx::InstructionId term = context.cfg().terminator(best->block);
  const std::string where = term != ptx::kNone ? " at " + context.where(term) : std::string();
  const char* dependent =
      best->level == ptx::Uniformity::Divergent ? "thread-dependent" : "warp-dependent";
  if (term != ptx::kNone && ptx::ends_thread(context.instruction(term))) {
    return {std::string("a ") + dependent + " early return" + where, term};
  }
  if (exits_enclosing_loop(context, best->block, block)) {
    return {std::string("a loop whose trip count is ") + dependent + where, term};
  }
  return {std::string("a ") + dependent + " branch" + where, term};
}

}  // namespace kiln::check
