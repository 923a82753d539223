#include <algorithm>
#include <map>
#include <string>

#include "barrier_sites.h"
#include "checks.h"
#include "constant_value.h"
#include "divergence_cause.h"

namespace kiln::check {

std::optional<BarrierSite> barrier_site(const ptx::Instruction& inst) {
  if (!ptx::is_barrier(inst)) return std::nullopt;
  BarrierSite site;
  const auto& ops = inst.operands;
  if (inst.opcode == ptx::Opcode::Barrier && inst.has_modifier("cluster")) {
    site.cluster = true;
    site.waits = inst.has_modifier("wait");
    site.aligned = inst.has_modifier("aligned");
    return site;
  }
  // bar is barrier.*.aligned; barrier without .aligned lets a warp's threads arrive apart.
  site.aligned = inst.opcode == ptx::Opcode::Bar || inst.has_modifier("aligned");
  if (inst.has_modifier("red")) {
    // bar.red.popc.u32 d, id, {count,} {!}p
    site.waits = true;
    if (ops.size() >= 3) site.id = &ops[1];
    if (ops.size() >= 4) site.count = &ops[2];
    return site;
  }
  site.waits = !inst.has_modifier("arrive");  // bar 0 / bar.sync / barrier.sync
  if (!ops.empty()) site.id = &ops[0];
  if (ops.size() >= 2) site.count = &ops[1];
  return site;
}

namespace {

bool is_call_to_barrier_function(const ptx::Instruction& inst,
                                 const std::set<std::string>& functions_with_barriers) {
  if (!ptx::is_call(inst)) return false;
  for (const ptx::Operand& op : inst.operands) {
    if (op.kind == ptx::OperandKind::Symbol && functions_with_barriers.count(op.name) != 0) {
      return true;
    }
  }
  return false;
}

}  // namespace

void check_barrier_divergence(FunctionContext& context,
                              const std::set<std::string>& functions_with_barriers) {
  const ptx::Function& f = context.function();
  for (ptx::InstructionId id = 0; id < f.instructions.size(); ++id) {
    const ptx::Instruction& inst = f.instructions[id];
    if (!context.cfg().reachable(context.cfg().block_of(id))) continue;
    const std::optional<BarrierSite> site = barrier_site(inst);
    const bool call = !site && is_call_to_barrier_function(inst, functions_with_barriers);
    if (!call && (!site || !site->waits)) continue;
    // A barrier without .aligned may be reached by each thread from a different place (the
    // producer and consumer arms of a warp-specialized kernel both call cluster_sync()), so
    // divergent control is legal there; only .aligned barriers (bar.sync, __syncthreads) must
    // be executed by all threads at the same instruction.
    if (site && !site->aligned) continue;
    const ptx::Uniformity level = context.uniformity().control_level(id);
    // A barrier with a thread count is meant for a subset of warps (warp specialization), so
    // whole warps may skip it; a barrier for the whole CTA (or cluster) may not be skipped by
    // anyone.
    const bool has_count = site && site->count != nullptr;
    const ptx::Uniformity allowed =
        has_count ? ptx::Uniformity::WarpUniform : ptx::Uniformity::Uniform;
    if (level <= allowed) continue;
    const DivergenceCause cause = divergence_cause(context, id, allowed);
    std::string what =
        call ? "a call to a function that waits on a CTA barrier" : "'" + context.text(id) + "'";
    std::string message = what + " is reached under " +
                          (level == ptx::Uniformity::Divergent ? std::string("thread-divergent")
                                                               : std::string("warp-dependent")) +
                          " control flow (" + cause.description +
                          "), so some threads may never arrive and the others wait forever "
                          "(or the barrier is undefined behavior on the GPU).";
    std::string hint =
        has_count ? "Make whole warps take the branch (a warp-uniform condition such as "
                    "threadIdx.x / 32), and give every participating warp the same thread count."
                  : "Move the barrier out of the conditional code, or make every thread reach it: "
                    "instead of returning early, keep out-of-range threads alive and guard only "
                    "their loads and stores (if (i < n) ...), and give loops a trip count that is "
                    "the same for every thread of the block.";
    context.report(FindingKind::BarrierDivergence, Severity::Error, id, std::move(message),
                   std::move(hint));
  }
}

void check_named_barriers(FunctionContext& context) {
  const ptx::Function& f = context.function();
  struct FirstUse {
    ptx::InstructionId at;
    int64_t count;
  };
  std::map<int64_t, FirstUse> first;  // barrier id -> first site with an immediate count
  uint64_t block_threads = 0;         // from .reqntid / .maxntid, 0 when unknown
  for (const char* name : {"reqntid", "maxntid"}) {
    if (const ptx::FunctionAttribute* a = f.attribute(name); a && block_threads == 0) {
      block_threads = 1;
      for (uint64_t v : a->values) block_threads *= v;
    }
  }
  for (ptx::InstructionId id = 0; id < f.instructions.size(); ++id) {
    const std::optional<BarrierSite> site = barrier_site(f.instructions[id]);
    if (!site || site->cluster || site->count == nullptr || site->id == nullptr) continue;
    const std::optional<int64_t> known_count = constant_value(context, id, *site->count);
    if (!known_count) continue;
    const int64_t count = *known_count;
    if (count <= 0 || count % 32 != 0) {
      context.report(FindingKind::NamedBarrierMismatch, Severity::Error, id,
                     "'" + context.text(id) + "' names a thread count of " + std::to_string(count) +
                         ", which is not a positive multiple of the warp size (32); the "
                         "barrier counts whole warps and the result is undefined.",
                     "Use the number of threads of the participating warps, a multiple of 32.");
      continue;
    }
    if (block_threads != 0 && static_cast<uint64_t>(count) > block_threads) {
      context.report(FindingKind::NamedBarrierMismatch, Severity::Error, id,
                     "'" + context.text(id) + "' waits for " + std::to_string(count) +
                         " threads, but the kernel's launch bounds allow only " +
                         std::to_string(block_threads) + "; it can never complete.",
                     "Count only the threads the block has (see __launch_bounds__).");
      continue;
    }
    const std::optional<int64_t> known_id = constant_value(context, id, *site->id);
    if (!known_id) continue;
    const int64_t bar_id = *known_id;
    auto [it, inserted] = first.try_emplace(bar_id, FirstUse{id, count});
    if (inserted || it->second.count == count) continue;
    context.report(
        FindingKind::NamedBarrierMismatch, Severity::Error, id,
        "Named barrier " + std::to_string(bar_id) + " is used here with " + std::to_string(count) +
            " threads but with " + std::to_string(it->second.count) + " at '" +
            context.text(it->second.at) + "' (" + context.where(it->second.at) +
            "); the hardware counts arrivals against whichever count comes first, so one "
            "side releases early or never.",
        "Give every use of barrier " + std::to_string(bar_id) +
            " the same thread count (the number of threads of all warps that meet there), or "
            "use different barrier ids for different groups.");
  }
}

}  // namespace kiln::check
