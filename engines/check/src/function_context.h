// What every check of one function needs: the function, its analyses, the module's source map,
// and the place findings and notes go. Findings are reported once per (kind, instruction).
#pragma once

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kiln/check/finding.h"
#include "kiln/ptx/function_analysis.h"
#include "kiln/ptx/module.h"
#include "kiln/ptx/source_map.h"

namespace kiln::check {

class FunctionContext {
 public:
  FunctionContext(const ptx::Module& module, const ptx::Function& function,
                  const ptx::SourceMap& source_map, const ptx::FunctionAnalysis& analysis,
                  CheckReport& report, const ptx::UniformityOptions& uniformity_options = {});
  ~FunctionContext();

  const ptx::Module& module() const { return module_; }
  const ptx::Function& function() const { return function_; }
  const ptx::FunctionAnalysis& analysis() const { return analysis_; }
  const ptx::ControlFlowGraph& cfg() const { return analysis_.cfg; }
  const ptx::UniformityAnalysis& uniformity() const { return analysis_.uniformity; }
  // The uniformity analysis again, but with every load from a uniform address taken as
  // uniform (UniformityOptions::loads_from_uniform_addresses_uniform): what stays divergent
  // there depends on the thread itself, not only on memory threads might see change. Computed
  // on first use.
  const ptx::UniformityAnalysis& uniform_load_uniformity() const;
  // The blocks ending in the branches (conditional bra, brx, guarded ret/exit) that decide
  // whether `block` runs, directly or through other such branches (iterated control
  // dependence), where a side of a branch that only traps does not count.
  std::vector<ptx::BlockId> controlling_branches(ptx::BlockId block) const;
  const ptx::Instruction& instruction(ptx::InstructionId id) const {
    return function_.instructions[id];
  }
  // "bar.sync 0;" as written (re-printed from the IR).
  std::string text(ptx::InstructionId id) const;
  // Where an instruction came from, for messages: "kernel.cu:42" or "PTX line 118".
  std::string where(ptx::InstructionId id) const;

  // `cause`: Finding::cause, empty for kinds that do not tell causes apart.
  void report(FindingKind kind, Severity severity, ptx::InstructionId at, std::string message,
              std::string fix_hint, std::string cause = {});
  void note(std::string text);

 private:
  // Per block, the branches it depends on directly; computed on first use.
  const std::vector<std::vector<ptx::BlockId>>& control_dependences() const;

  const ptx::Module& module_;
  const ptx::Function& function_;
  const ptx::SourceMap& source_map_;
  const ptx::FunctionAnalysis& analysis_;
  CheckReport& report_;
  ptx::UniformityOptions uniformity_options_;
  mutable std::unique_ptr<ptx::UniformityAnalysis> uniform_load_uniformity_;
  mutable std::vector<std::vector<ptx::BlockId>> control_dependences_;  // per block, direct
  std::set<std::pair<FindingKind, ptx::InstructionId>> reported_;
};

// Whether `path` is a toolkit or system header (a .loc inside __shfl_sync's definition, say),
// so a finding points at the user's call site instead.
bool is_system_header(std::string_view path);
// The innermost of `position` and its inlining call sites that is not in a system header.
const ptx::SourcePosition* user_position(const ptx::SourcePosition& position);

}  // namespace kiln::check
