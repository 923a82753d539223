// "Did you mean" suggestions for ids, opcodes and section names.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kiln::kb {

// Up to `count` of `candidates` closest to `wanted`: names containing it (or contained
// in it) first, then those sharing the most words (split at _ . - :), then the fewest
// edits. Names sharing no word and needing many edits are left out.
std::vector<std::string> closest_names(const std::string& wanted,
                                       const std::vector<std::string>& candidates,
                                       size_t count = 5);

}  // namespace kiln::kb
