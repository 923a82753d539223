#include "barrier_sites.h"
#include "checks.h"
#include "constant_value.h"
#include "divergence_cause.h"

namespace kiln::check {
namespace {

// .sync collectives that take a member mask as their last operand.
bool takes_member_mask(const ptx::Instruction& inst) {
  switch (inst.opcode) {
    case ptx::Opcode::Shfl:
    case ptx::Opcode::Vote:
    case ptx::Opcode::Redux:
    case ptx::Opcode::Match:
      return inst.has_modifier("sync");
    case ptx::Opcode::Bar:  // bar.warp.sync membermask
      return inst.has_modifier("warp");
    default:
      return false;
  }
}

bool is_full_mask(const FunctionContext& context, ptx::InstructionId at, const ptx::Operand& op) {
  const std::optional<int64_t> mask = constant_value(context, at, op);
  return mask && (static_cast<uint64_t>(*mask) & 0xffffffffu) == 0xffffffffu;
}

}  // namespace

void check_collectives(FunctionContext& context) {
  const ptx::Function& f = context.function();
  for (ptx::InstructionId id = 0; id < f.instructions.size(); ++id) {
    const ptx::Instruction& inst = f.instructions[id];
    if (!context.cfg().reachable(context.cfg().block_of(id))) continue;
    const bool aligned = inst.has_modifier("aligned") && !barrier_site(inst);
    const bool masked = takes_member_mask(inst) && !inst.operands.empty() &&
                        is_full_mask(context, id, inst.operands.back());
    if (!aligned && !masked) continue;
    if (context.uniformity().control_level(id) != ptx::Uniformity::Divergent) continue;
    const DivergenceCause cause = divergence_cause(context, id, ptx::Uniformity::WarpUniform);
    if (aligned) {
      context.report(
          FindingKind::CollectiveDivergence, Severity::Error, id,
          "'" + context.text(id) +
              "' is a warp-collective .aligned instruction that every "
              "thread of the warp must execute together, but it runs under " +
              cause.description + "; lanes that skip it leave the result undefined.",
          "Execute it with the whole warp: move it out of the lane-dependent branch and guard "
          "only the loads and stores around it (predicate the data, not the collective).");
    } else {
      context.report(
          FindingKind::CollectiveMask, Severity::Error, id,
          "'" + context.text(id) +
              "' names all 32 lanes in its member mask (0xffffffff), "
              "but it runs under " +
              cause.description +
              ", so some named lanes may not execute it; the result is undefined and the warp "
              "may hang.",
          "Call it outside the branch with the whole warp, or pass the mask of the lanes that "
          "really take part (e.g. __ballot_sync(0xffffffff, cond) computed before the branch).");
    }
  }
}

}  // namespace kiln::check
