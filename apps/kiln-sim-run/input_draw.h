// Inputs for a simulated run, drawn on the host from the task's distributions with the
// harness's counter-based hashes (kiln/tasks/hash_mix.h) and exact dtype rounding
// (kiln/tasks/numeric_codec.h): x = low + (high - low) * u, u uniform in [0, 1), integers
// kept below `high`. Deterministic in (seed, tensor index).
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/tasks/tensor_layout.h"

namespace kiln::sim::run {

// Dense row-major bytes of `tensor` for `seed`; the tensor must be an input.
std::vector<unsigned char> draw_input(const tasks::TensorLayout& tensor, uint64_t seed,
                                      uint64_t tensor_index);

}  // namespace kiln::sim::run
