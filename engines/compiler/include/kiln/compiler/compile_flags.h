// The nvcc flags an agent may add to a compile: an allow-list, so a candidate cannot change
// what is measured (no -G, no other -arch, no host flags) or reach outside the build.
#pragma once

#include <string>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::compiler {

// Checks `defines` ("NAME" or "NAME=VALUE") and `flags` and returns them as nvcc arguments.
// Allowed flags: -DNAME[=VALUE], -maxrregcount=N (16..255), --use_fast_math, and
// -Xptxas -O0..-O3 (as one string "-Xptxas -O2", "-Xptxas=-O2", or two items). Anything else
// is an error that names the flag and lists what is allowed.
Result<std::vector<std::string>> checked_flags(const std::vector<std::string>& defines,
                                               const std::vector<std::string>& flags);

}  // namespace kiln::compiler
