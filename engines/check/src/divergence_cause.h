// Why an instruction runs under divergent control: the branch (or guard) responsible, in words
// a finding can quote ("a thread-dependent early return at kernel.cu:12").
#pragma once

#include <string>

#include "function_context.h"

namespace kiln::check {

struct DivergenceCause {
  std::string description;
  ptx::InstructionId branch = ptx::kNone;  // the branch, ret or exit; kNone for a guard
};

// The cause of `at` running above `allowed` (the level the check tolerates).
DivergenceCause divergence_cause(const FunctionContext& context, ptx::InstructionId at,
                                 ptx::Uniformity allowed);

}  // namespace kiln::check
