// Ad-hoc small workloads ("M=256,N=256,K=256") for the CPU simulator: checked against a task's
// dims and bounded in size, so a simulate call cannot ask for a benchmark-sized run.
#pragma once

#include <cstdint>
#include <string_view>

#include "kiln/base/result.h"
#include "kiln/tasks/task.h"

namespace kiln::tasks {

// Caps on an ad-hoc shape: elements of any one tensor, and the task's flops expression (when it
// has one). 2*512^3 flops is a 512x512x512 GEMM; 2^22 elements is a 2048x2048 matrix.
inline constexpr int64_t kMaxShapeTensorElements = int64_t{1} << 22;
inline constexpr int64_t kMaxShapeFlops = int64_t{2} * 512 * 512 * 512;

// Parses "DIM=N,DIM=N,..." naming every dim of the task once. The workload's name is the values
// joined by 'x' in the task's dims order ("256x256x256"). Errors list the task's dims, or say
// which cap a too-large shape exceeds.
Result<Workload> parse_shape(const Task& task, std::string_view text);

}  // namespace kiln::tasks
