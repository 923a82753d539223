#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

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

const char* dependence_word(ptx::Uniformity level) {
  return level == ptx::Uniformity::Divergent ? "thread-dependent" : "warp-dependent";
}

const char* dependence_cause(ptx::Uniformity level) {
  return level == ptx::Uniformity::Divergent ? "thread_dependent" : "warp_dependent";
}

// The barrier id `at` names, when it is a constant (bar.sync 0; mov 1 then barrier.sync %r).
std::optional<int64_t> barrier_id(const FunctionContext& context, ptx::InstructionId at,
                                  const BarrierSite& site) {
  if (site.id == nullptr) return std::nullopt;
  return constant_value(context, at, *site.id);
}

// Whether every thread entering `block` arrives at CTA barrier `id` there (any id when it is
// not known): an unguarded bar/barrier sync, arrive or red of that id.
bool block_arrives(const FunctionContext& context, ptx::BlockId block, std::optional<int64_t> id) {
  const ptx::BasicBlock& b = context.cfg().block(block);
  for (ptx::InstructionId i = b.first; i < b.last; ++i) {
    const std::optional<BarrierSite> site = barrier_site(context.instruction(i));
    if (!site || site->cluster || context.instruction(i).guard) continue;
    const std::optional<int64_t> other = barrier_id(context, i, *site);
    if (id && other && *id != *other) continue;
    return true;
  }
  return false;
}

// A barrier without .aligned may be reached by each thread at a different instruction (both
// arms of a branch calling cg::this_thread_block().sync()), so divergent control alone is no
// bug there. The bug is a path on which a thread arrives at none: the first divergent branch
// over `at` from which some path reaches the branch's reconvergence point (or the end of the
// kernel) without passing an arrival at the same barrier id.
const ptx::DivergentBranch* branch_skipping_barrier(const FunctionContext& context,
                                                    ptx::InstructionId at, ptx::Uniformity allowed,
                                                    std::optional<int64_t> id) {
  const ptx::ControlFlowGraph& cfg = context.cfg();
  for (const ptx::DivergentBranch* branch : divergent_branches_over(context, at, allowed)) {
    std::vector<char> seen(cfg.size(), 0);
    std::vector<ptx::BlockId> work = cfg.block(branch->block).successors;
    while (!work.empty()) {
      const ptx::BlockId b = work.back();
      work.pop_back();
      if (seen[b]) continue;
      seen[b] = 1;
      if (b == branch->reconvergence ||
          !std::binary_search(branch->region.begin(), branch->region.end(), b)) {
        return branch;
      }
      if (block_arrives(context, b, id)) continue;
      for (ptx::BlockId s : cfg.block(b).successors) work.push_back(s);
    }
  }
  return nullptr;
}

constexpr const char* kBarrierHint =
    "Move the barrier out of the conditional code, or make every thread reach it: instead of "
    "returning early, keep out-of-range threads alive and guard only their loads and stores "
    "(if (i < n) ...), and give loops a trip count that is the same for every thread of the "
    "block.";
constexpr const char* kCountedBarrierHint =
    "Make whole warps take the branch (a warp-uniform condition such as threadIdx.x / 32), and "
    "give every participating warp the same thread count.";
constexpr const char* kUniformGuardHint =
    "If the word cannot change while the kernel runs, read it with __ldg() (or through a const "
    "__restrict__ pointer): the read-only load tells the compiler and this check that every "
    "thread sees one value. If it can change, branch on one agreed value instead, e.g. "
    "__syncthreads_or(*flag), so that all threads take the same side.";

// A finding for a barrier whose divergence comes only from loads of one word (see
// uniform_load_guard): a warning, since it diverges only if the word changes under the reads.
void report_uniform_guard(FunctionContext& context, ptx::InstructionId at, const std::string& what,
                          const DivergenceCause& divergence,
                          const std::vector<ptx::InstructionId>& loads) {
  const std::string cause = divergence.branch == ptx::kNone
                                ? std::string("its guard predicate")
                                : branch_cause(context, context.cfg().block_of(divergence.branch),
                                               "load-dependent", context.cfg().block_of(at))
                                      .description;
  std::string read;
  for (ptx::InstructionId load : loads) {
    read += (read.empty() ? "'" : ", '") + context.text(load) + "' at " + context.where(load);
  }
  context.report(FindingKind::BarrierDivergence, Severity::Warning, at,
                 what + " is reached under a condition (" + cause +
                     ") that comes only from memory every thread reads at the same address (" +
                     read +
                     "), which no instruction of the kernel writes. Every thread reads the same "
                     "word, so the threads diverge here only if the word differs between their "
                     "reads (written concurrently, by the host or another kernel); the dynamic "
                     "engine (engine \"sim\") can tell whether they did.",
                 kUniformGuardHint, "uniform_load_guard");
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
    // A cluster barrier without .aligned is reached from different places on purpose (the
    // producer and consumer arms of a warp-specialized kernel both call cluster_sync()), and
    // its arrive and wait are separate instructions; it is not checked here.
    if (site && site->cluster && !site->aligned) continue;
    const ptx::Uniformity level = context.uniformity().control_level(id);
    // A barrier with a thread count is meant for a subset of warps (warp specialization), so
    // whole warps may skip it; a barrier for the whole CTA (or cluster) may not be skipped by
    // anyone.
    const bool has_count = site && site->count != nullptr;
    const ptx::Uniformity allowed =
        has_count ? ptx::Uniformity::WarpUniform : ptx::Uniformity::Uniform;
    if (level <= allowed) continue;
    const bool aligned = !site || site->aligned;
    std::string what =
        call ? "a call to a function that waits on a CTA barrier" : "'" + context.text(id) + "'";
    std::vector<ptx::BlockId> responsible;
    DivergenceCause cause;
    ptx::Uniformity cause_level = level;
    if (aligned) {
      cause = divergence_cause(context, id, allowed);
      for (const ptx::DivergentBranch* b : divergent_branches_over(context, id, allowed)) {
        responsible.push_back(b->block);
      }
    } else if (inst.guard && context.uniformity().level(inst.guard->reg, id) > allowed) {
      cause = {"its guard predicate depends on the thread", ptx::kNone};
      cause_level = context.uniformity().level(inst.guard->reg, id);
    } else {
      const ptx::DivergentBranch* skipping =
          branch_skipping_barrier(context, id, allowed, barrier_id(context, id, *site));
      if (skipping == nullptr) continue;  // every thread arrives, at one instruction or another
      cause = branch_cause(context, *skipping, context.cfg().block_of(id));
      cause_level = skipping->level;
      responsible.push_back(skipping->block);
    }
    if (auto loads = uniform_load_guard(context, id, responsible, allowed)) {
      report_uniform_guard(context, id, what, cause, *loads);
      continue;
    }
    std::string message =
        aligned ? what + " is reached under " + dependence_word(cause_level) + " control flow (" +
                      cause.description +
                      "), so some threads may never arrive and the others wait forever (or the "
                      "barrier is undefined behavior on the GPU)."
                : what +
                      " is a CTA barrier without .aligned (what cooperative groups' "
                      "this_thread_block().sync() compiles to): threads may arrive at it from "
                      "different instructions, but every thread of the CTA (or of the named "
                      "thread count) must still arrive at this barrier somewhere. Under " +
                      cause.description +
                      ", some threads can pass without arriving at any, so the others wait "
                      "forever (or the barrier is undefined behavior on the GPU).";
    std::string hint = has_count ? kCountedBarrierHint : kBarrierHint;
    if (!aligned) hint += " Calling sync() on every path (in both arms of the branch) also works.";
    context.report(FindingKind::BarrierDivergence, Severity::Error, id, std::move(message),
                   std::move(hint), dependence_cause(cause_level));
  }
}

namespace {

bool reads_special(const ptx::Operand& op, std::initializer_list<ptx::SpecialRegister> regs) {
  if (op.kind == ptx::OperandKind::SpecialRegister) {
    return std::find(regs.begin(), regs.end(), op.special) != regs.end();
  }
  return std::any_of(op.elements.begin(), op.elements.end(),
                     [&](const ptx::Operand& e) { return reads_special(e, regs); });
}

bool slice_reads_special(const FunctionContext& context,
                         const std::vector<ptx::InstructionId>& slice,
                         std::initializer_list<ptx::SpecialRegister> regs) {
  return std::any_of(slice.begin(), slice.end(), [&](ptx::InstructionId id) {
    const auto& ops = context.instruction(id).operands;
    return std::any_of(ops.begin(), ops.end(),
                       [&](const ptx::Operand& op) { return reads_special(op, regs); });
  });
}

// An atomic on the grid workspace: its address derives from %envreg (the driver's pointer).
bool is_grid_arrival(const FunctionContext& context, ptx::InstructionId id) {
  const ptx::Instruction& inst = context.instruction(id);
  if (!ptx::is_atomic(inst)) return false;
  for (const ptx::Operand& op : inst.operands) {
    if (op.kind != ptx::OperandKind::Address || op.elements.empty()) continue;
    if (!op.address_base().is_register()) return false;
    const auto slice = value_slice(context, {{id, op.address_base().reg}});
    return slice_reads_special(context, slice, {ptx::SpecialRegister::Envreg});
  }
  return false;
}

// The nearest waiting CTA barrier that every path to `at` passes, walking up the dominators.
ptx::InstructionId dominating_barrier(const FunctionContext& context, ptx::InstructionId at) {
  const ptx::ControlFlowGraph& cfg = context.cfg();
  ptx::BlockId block = cfg.block_of(at);
  ptx::InstructionId end = at;
  while (block != ptx::kNone) {
    for (ptx::InstructionId i = end; i > cfg.block(block).first; --i) {
      const std::optional<BarrierSite> site = barrier_site(context.instruction(i - 1));
      if (site && site->waits && !site->cluster) return i - 1;
    }
    block = context.analysis().dominators.idom(block);
    if (block != ptx::kNone) end = cfg.block(block).last;
  }
  return at;
}

// Block identity: a condition on these differs between the blocks of one grid.
constexpr std::initializer_list<ptx::SpecialRegister> kBlockRegisters = {
    ptx::SpecialRegister::Ctaid, ptx::SpecialRegister::ClusterCtaid,
    ptx::SpecialRegister::ClusterCtarank, ptx::SpecialRegister::Clusterid,
    ptx::SpecialRegister::Smid};

constexpr const char* kGridHint =
    "Call grid.sync() in every block and every thread, the same number of times: instead of "
    "skipping it in some blocks, keep blocks without work alive and guard only their loads and "
    "stores.";

void report_grid(FunctionContext& context, const GridBarrier& grid, const std::string& condition,
                 const char* cause) {
  context.report(
      FindingKind::BarrierDivergence, Severity::Error, grid.entry,
      "'" + context.text(grid.entry) +
          "' begins a grid-wide barrier (cg::this_grid().sync(); the arrival is '" +
          context.text(grid.arrival) + "' at " + context.where(grid.arrival) + "), reached under " +
          condition +
          ". Every block of the grid (and every thread of each block, at its CTA barriers) must "
          "arrive, so the blocks or threads that skip it leave the others waiting forever.",
      kGridHint, cause);
}

}  // namespace

std::vector<GridBarrier> grid_barriers(const FunctionContext& context) {
  std::vector<GridBarrier> result;
  for (ptx::InstructionId id = 0; id < context.function().instructions.size(); ++id) {
    if (!context.cfg().reachable(context.cfg().block_of(id))) continue;
    if (is_grid_arrival(context, id)) result.push_back({id, dominating_barrier(context, id)});
  }
  return result;
}

void check_grid_barriers(FunctionContext& context) {
  const ptx::UniformityAnalysis& u = context.uniformity();
  for (const GridBarrier& grid : grid_barriers(context)) {
    const ptx::BlockId block = context.cfg().block_of(grid.entry);
    const ptx::Instruction& entry = context.instruction(grid.entry);
    const auto all = [](ptx::BlockId) { return true; };
    if (entry.guard) {
      const auto slice = value_slice(context, {{grid.entry, entry.guard->reg}}, all);
      if (slice_reads_special(context, slice, kBlockRegisters)) {
        report_grid(context, grid, "a guard on blockIdx", "block_dependent");
        continue;
      }
    }
    for (ptx::BlockId branch : context.controlling_branches(block)) {
      const auto slice = value_slice(context, {branch_predicate(context, branch)}, all);
      if (slice_reads_special(context, slice, kBlockRegisters)) {
        report_grid(context, grid,
                    branch_cause(context, branch, "block-dependent", block).description,
                    "block_dependent");
        break;
      }
    }
    if (u.control_level(grid.entry) == ptx::Uniformity::Uniform) continue;
    const DivergenceCause cause = divergence_cause(context, grid.entry, ptx::Uniformity::Uniform);
    std::vector<ptx::BlockId> responsible;
    for (const auto* b : divergent_branches_over(context, grid.entry, ptx::Uniformity::Uniform)) {
      responsible.push_back(b->block);
    }
    if (auto loads =
            uniform_load_guard(context, grid.entry, responsible, ptx::Uniformity::Uniform)) {
      continue;  // check_barrier_divergence reports the guard as a warning at the same place
    }
    report_grid(context, grid,
                std::string(dependence_word(u.control_level(grid.entry))) + " control flow (" +
                    cause.description + ")",
                dependence_cause(u.control_level(grid.entry)));
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
