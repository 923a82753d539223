// Why an instruction runs under divergent control: the branch (or guard) responsible, in words
// a finding can quote ("a thread-dependent early return at kernel.cu:12"), and whether that
// divergence comes only from a guard on one word every thread reads the same.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "function_context.h"

namespace kiln::check {

struct DivergenceCause {
  std::string description;
  ptx::InstructionId branch = ptx::kNone;  // the branch, ret or exit; kNone for a guard
};

// The cause of `at` running above `allowed` (the level the check tolerates).
DivergenceCause divergence_cause(const FunctionContext& context, ptx::InstructionId at,
                                 ptx::Uniformity allowed);
// The words for one divergent branch whose region holds `block`.
DivergenceCause branch_cause(const FunctionContext& context, const ptx::DivergentBranch& branch,
                             ptx::BlockId block);
// The same for any branch ending `branch_block` that decides whether `block` runs, its
// condition described as `dependent` ("block-dependent").
DivergenceCause branch_cause(const FunctionContext& context, ptx::BlockId branch_block,
                             std::string_view dependent, ptx::BlockId block);

// The branches above `allowed` whose region holds `at`'s block.
std::vector<const ptx::DivergentBranch*> divergent_branches_over(const FunctionContext& context,
                                                                 ptx::InstructionId at,
                                                                 ptx::Uniformity allowed);

// When `at` is divergent only because of loads of one word: the conditions of `branches`
// (blocks ending in branches above `allowed`) and of `at`'s own guard, if it is above
// `allowed`, derive from loads whose address is the same in every thread of the CTA
// (independent of %tid, %laneid, ...) from memory no instruction of the kernel writes (no
// store, atomic or copy to that variable or pointer parameter, no call). Every thread then
// reads the same value unless the word changes between their reads (the host or another
// kernel writing it concurrently), which only a run can tell. Returns those loads; nullopt
// when the condition depends on the thread in any other way, or the word may be written.
// Distinct pointer parameters and variables are taken not to overlap.
std::optional<std::vector<ptx::InstructionId>> uniform_load_guard(
    const FunctionContext& context, ptx::InstructionId at,
    const std::vector<ptx::BlockId>& branches, ptx::Uniformity allowed);

}  // namespace kiln::check
