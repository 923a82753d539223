// Every analysis of one function body, built in order, for callers that want them all
// (the checkers, the benchmark).
#pragma once

#include <memory>

#include "kiln/ptx/cfg.h"
#include "kiln/ptx/dominators.h"
#include "kiln/ptx/function.h"
#include "kiln/ptx/loops.h"
#include "kiln/ptx/reaching_definitions.h"
#include "kiln/ptx/uniformity.h"

namespace kiln::ptx {

struct FunctionAnalysis {
  const Function* function = nullptr;
  ControlFlowGraph cfg;
  DominatorTree dominators;
  DominatorTree post_dominators;
  LoopInfo loops;
  ReachingDefinitions reaching;
  UniformityAnalysis uniformity;
};

// Heap-allocated so the references the analyses hold to cfg and post_dominators stay valid.
// `function` must outlive the result.
std::unique_ptr<FunctionAnalysis> analyze_function(const Function& function,
                                                   const UniformityOptions& options = {});

}  // namespace kiln::ptx
