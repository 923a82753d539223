#include "kiln/check/static_synccheck.h"

#include <algorithm>
#include <set>

#include "barrier_sites.h"
#include "checks.h"
#include "kiln/ptx/function_analysis.h"
#include "kiln/ptx/source_map.h"

namespace kiln::check {
namespace {

// The callee names of a call instruction (the Symbol operands).
std::vector<std::string> callees(const ptx::Instruction& inst) {
  std::vector<std::string> names;
  for (const ptx::Operand& op : inst.operands) {
    if (op.kind == ptx::OperandKind::Symbol) names.push_back(op.name);
  }
  return names;
}

// Functions that wait on a CTA barrier, directly or through calls.
std::set<std::string> functions_with_barriers(const ptx::Module& module) {
  std::set<std::string> result;
  bool changed = true;
  while (changed) {
    changed = false;
    for (const ptx::Function& f : module.functions) {
      if (!f.has_body || result.count(f.name) != 0) continue;
      for (const ptx::Instruction& inst : f.instructions) {
        const auto site = barrier_site(inst);
        bool waits = site && site->waits;
        if (!waits && ptx::is_call(inst)) {
          for (const std::string& callee : callees(inst)) waits |= result.count(callee) != 0;
        }
        if (waits) {
          result.insert(f.name);
          changed = true;
          break;
        }
      }
    }
  }
  return result;
}

void note_unmodelled(FunctionContext& context) {
  if (context.cfg().has_conservative_edges()) {
    context.note(
        "an indirect branch (brx.idx) without a .branchtargets list was assumed to "
        "reach every label");
  }
  for (ptx::InstructionId id = 0; id < context.function().instructions.size(); ++id) {
    const ptx::Instruction& inst = context.instruction(id);
    if (!ptx::is_call(inst)) continue;
    for (const std::string& callee : callees(inst)) {
      const ptx::Function* target = context.module().find_function(callee);
      if (target == nullptr || target->has_body) continue;
      context.note("calls '" + callee + "' (" + context.where(id) +
                   "), whose body is not in this module; synchronization inside it was not "
                   "checked");
    }
    if (callees(inst).empty()) {
      context.note("an indirect call (" + context.where(id) + ") was not followed");
    }
  }
}

// One finding per source line: an unrolled loop or an inlined helper puts several PTX copies
// of one .cu statement in the code, and the agent fixes the statement once.
void merge_copies_of_one_line(std::vector<Finding>& findings) {
  std::vector<Finding> merged;
  for (Finding& f : findings) {
    auto same = std::find_if(merged.begin(), merged.end(), [&](const Finding& m) {
      return f.source_line != 0 && m.kind == f.kind && m.function == f.function &&
             m.source_file == f.source_file && m.source_line == f.source_line;
    });
    if (same == merged.end()) {
      merged.push_back(std::move(f));
      continue;
    }
    const std::string also = " Also at PTX line";
    const size_t at = same->message.find(also);
    if (at == std::string::npos) {
      same->message += also + " " + std::to_string(f.ptx_line) + ".";
    } else {
      same->message.pop_back();  // the period
      if (same->message[at + also.size()] == ' ') same->message.insert(at + also.size(), "s");
      same->message += ", " + std::to_string(f.ptx_line) + ".";
    }
  }
  findings = std::move(merged);
}

}  // namespace

CheckReport static_synccheck(const ptx::Module& module, const SyncCheckOptions& options) {
  CheckReport report;
  const ptx::SourceMap source_map = ptx::SourceMap::build(module);
  const std::set<std::string> with_barriers = functions_with_barriers(module);
  ptx::UniformityOptions uniformity;
  uniformity.warp_aligned_x = options.warp_aligned_x;
  for (const ptx::Function& f : module.functions) {
    if (!f.has_body) continue;
    if (!options.functions.empty() && std::find(options.functions.begin(), options.functions.end(),
                                                f.name) == options.functions.end()) {
      continue;
    }
    const auto analysis = ptx::analyze_function(f, uniformity);
    FunctionContext context(module, f, source_map, *analysis, report, uniformity);
    note_unmodelled(context);
    check_grid_barriers(context);
    check_barrier_divergence(context, with_barriers);
    check_named_barriers(context);
    check_collectives(context);
    check_mbarriers(context);
    check_async_copies(context);
    check_wgmma(context);
  }
  std::stable_sort(report.findings.begin(), report.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.ptx_line < b.ptx_line; });
  merge_copies_of_one_line(report.findings);
  report.finish();
  return report;
}

}  // namespace kiln::check
