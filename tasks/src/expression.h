// Shape and size expressions (internal): syntax checks and the names they use.
// The public entry point is kiln::tasks::evaluate in kiln/tasks/task.h.
#pragma once

#include <string>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::tasks {

// Parses `expression` without evaluating it and returns the identifiers it names,
// in order of first use. Fails on syntax errors (empty, unbalanced, trailing junk,
// literals that do not fit in int64).
Result<std::vector<std::string>> expression_names(const std::string& expression);

}  // namespace kiln::tasks
