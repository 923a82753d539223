// What a register holds at an instruction, as far as the checks need to know it.
//
// constant_value: the constant, when every definition reaching it is a mov of the same
// immediate: nvcc passes shuffle masks and barrier counts through registers
// (mov.u32 %r10, -1; shfl.sync.bfly.b32 ..., %r10;).
//
// value_slice: the instructions a value derives from (its backward slice), for the questions
// "does this condition depend on %ctaid?" and "which loads does it come from?".
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "function_context.h"

namespace kiln::check {

std::optional<int64_t> constant_value(const FunctionContext& context, ptx::InstructionId at,
                                      const ptx::Operand& operand);

// A register as read by an instruction.
struct ValueUse {
  ptx::InstructionId at = 0;
  ptx::RegisterId reg = ptx::kNone;
};

// The register the branch ending `block` decides on (the guard of bra/ret/exit, or brx.idx's
// index), as read by its terminator; reg is kNone for a block without such a branch.
ValueUse branch_predicate(const FunctionContext& context, ptx::BlockId block);

// The instructions whose results the values of `roots` derive from: their reaching
// definitions, transitively through every register those read (addresses included). When
// `follow_branch` is given, also through the predicates of the branches that decide whether a
// definition runs (FunctionContext::controlling_branches), for the branches it accepts: a value
// set differently on two sides of a branch depends on its condition. Sorted, each once.
std::vector<ptx::InstructionId> value_slice(
    const FunctionContext& context, const std::vector<ValueUse>& roots,
    const std::function<bool(ptx::BlockId)>& follow_branch = nullptr);

}  // namespace kiln::check
