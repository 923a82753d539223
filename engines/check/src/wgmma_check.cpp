// wgmma.mma_async ordering. Along every path:
//   fenced       a wgmma.fence ran, and no other instruction changed an accumulator since
//                (AND over paths; a mov, which is how nvcc materializes zeroed accumulators,
//                does not count)
//   uncommitted  an mma_async ran that no commit_group has closed yet (OR)
//   pending      committed groups not yet waited for (MAX, saturating)
// An mma_async needs `fenced`; any other instruction that reads an accumulator register needs
// nothing uncommitted and nothing pending (wgmma.wait_group 0 after the last commit).
#include <algorithm>
#include <set>

#include "checks.h"
#include "forward_dataflow.h"
#include "kiln/ptx/def_use.h"

namespace kiln::check {
namespace {

constexpr uint32_t kMaxPending = 64;

struct WgmmaState {
  bool fenced = false;
  bool uncommitted = false;
  uint32_t pending = 0;
  bool merge(const WgmmaState& o) {
    const WgmmaState before = *this;
    fenced &= o.fenced;
    uncommitted |= o.uncommitted;
    pending = std::max(pending, o.pending);
    return before.fenced != fenced || before.uncommitted != uncommitted ||
           before.pending != pending;
  }
};

bool is_wgmma(const ptx::Instruction& inst, const char* what) {
  return inst.opcode == ptx::Opcode::Wgmma && inst.has_modifier(what);
}

}  // namespace

void check_wgmma(FunctionContext& context) {
  const ptx::Function& f = context.function();
  std::set<ptx::RegisterId> accumulators;
  for (const ptx::Instruction& inst : f.instructions) {
    if (!is_wgmma(inst, "mma_async") || inst.operands.empty()) continue;
    std::vector<ptx::RegisterId> defs;
    ptx::append_defs(inst, defs);
    accumulators.insert(defs.begin(), defs.end());
  }
  if (accumulators.empty()) return;
  auto touches_accumulator = [&](const std::vector<ptx::RegisterId>& regs) {
    return std::any_of(regs.begin(), regs.end(),
                       [&](ptx::RegisterId r) { return accumulators.count(r) != 0; });
  };

  auto transfer = [&](ptx::InstructionId id, WgmmaState& s) {
    const ptx::Instruction& inst = context.instruction(id);
    if (inst.opcode == ptx::Opcode::Wgmma) {
      if (inst.has_modifier("fence")) s.fenced = true;
      if (inst.has_modifier("mma_async")) s.uncommitted = true;
      if (inst.has_modifier("commit_group")) {
        s.pending = std::min(s.pending + 1, kMaxPending);
        s.uncommitted = false;
      }
      if (inst.has_modifier("wait_group") && !inst.operands.empty() &&
          inst.operands[0].kind == ptx::OperandKind::Immediate) {
        s.pending = std::min(s.pending, static_cast<uint32_t>(inst.operands[0].number.bits));
      }
      return;
    }
    // A mov into an accumulator is the compiler materializing `float acc = 0` (nvcc may
    // schedule it after the fence; ptxas orders it). Arithmetic on an accumulator between
    // batches is a real modification that needs a new fence.
    if (inst.opcode == ptx::Opcode::Mov) return;
    std::vector<ptx::RegisterId> defs;
    ptx::append_defs(inst, defs);
    if (touches_accumulator(defs)) s.fenced = false;
  };

  auto in = forward_dataflow(context.cfg(), WgmmaState{}, transfer);
  const ptx::ReachingDefinitions& rd = context.analysis().reaching;
  replay_dataflow(context.cfg(), in, transfer, [&](ptx::InstructionId id, const WgmmaState& s) {
    const ptx::Instruction& inst = context.instruction(id);
    if (is_wgmma(inst, "mma_async")) {
      if (!s.fenced) {
        context.report(
            FindingKind::WgmmaFence, Severity::Error, id,
            "'" + context.text(id) +
                "' runs without a wgmma.fence before it on some path "
                "(or after the accumulator registers were last written by other "
                "instructions), so the tensor cores may read stale accumulators or operands.",
            "Execute wgmma.fence.sync.aligned (cute::warpgroup_arrive()) before the first "
            "wgmma.mma_async of each batch and after any other write to its accumulators.");
      }
      return;
    }
    if (inst.opcode == ptx::Opcode::Wgmma || (!s.uncommitted && s.pending == 0)) return;
    std::vector<ptx::RegisterId> uses;
    ptx::append_uses(inst, uses);
    for (ptx::RegisterId r : uses) {
      if (accumulators.count(r) == 0) continue;
      // Point at the wgmma whose results are read too early.
      ptx::InstructionId culprit = id;
      for (ptx::DefinitionId d : rd.reaching(id, r)) {
        const ptx::InstructionId def = rd.definitions()[d].instruction;
        if (is_wgmma(context.instruction(def), "mma_async")) {
          culprit = def;
          break;
        }
      }
      context.report(
          FindingKind::WgmmaFence, Severity::Error, culprit,
          "The accumulators of '" + context.text(culprit) + "' are read by '" + context.text(id) +
              "' (" + context.where(id) + ") before " +
              (s.uncommitted ? std::string("a wgmma.commit_group closes its group")
                             : std::string("a wgmma.wait_group has waited for its group")) +
              "; the asynchronous MMA may still be writing them.",
          "After the last wgmma.mma_async, execute wgmma.commit_group.sync.aligned and then "
          "wgmma.wait_group.sync.aligned 0 (cute::warpgroup_commit_batch(); "
          "warpgroup_wait<0>()) before reading the accumulators.");
      return;
    }
  });
}

}  // namespace kiln::check
