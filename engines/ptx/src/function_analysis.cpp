#include "kiln/ptx/function_analysis.h"

namespace kiln::ptx {

std::unique_ptr<FunctionAnalysis> analyze_function(const Function& function,
                                                   const UniformityOptions& options) {
  auto a = std::make_unique<FunctionAnalysis>();
  a->function = &function;
  a->cfg = ControlFlowGraph::build(function);
  a->dominators = DominatorTree::dominators(a->cfg);
  a->post_dominators = DominatorTree::post_dominators(a->cfg);
  a->loops = LoopInfo::compute(a->cfg, a->dominators);
  a->reaching = ReachingDefinitions::compute(function, a->cfg);
  a->uniformity = UniformityAnalysis::compute(function, a->cfg, a->post_dominators, options);
  return a;
}

}  // namespace kiln::ptx
