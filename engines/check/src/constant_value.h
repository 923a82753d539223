// The constant a register holds at an instruction, when every definition reaching it is a mov
// of the same immediate: nvcc passes shuffle masks and barrier counts through registers
// (mov.u32 %r10, -1; shfl.sync.bfly.b32 ..., %r10;).
#pragma once

#include <cstdint>
#include <optional>

#include "function_context.h"

namespace kiln::check {

std::optional<int64_t> constant_value(const FunctionContext& context, ptx::InstructionId at,
                                      const ptx::Operand& operand);

}  // namespace kiln::check
