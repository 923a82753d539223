// Integer expressions over a shape's dims, as meta.json writes tensor extents, flops and
// bytes ("G+1", "2*M*N*K", "2*(M*K+N*K+M*N)"): + - * / % with C precedence, unary minus,
// parentheses, integer literals and dim names. int64 arithmetic; overflow, division by
// zero and unknown names are errors. The same language as task.json's expressions.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "kiln/base/result.h"

namespace kiln::zoo {

Result<int64_t> evaluate_dim_expression(const std::string& expression,
                                        const std::map<std::string, int64_t>& dims);

}  // namespace kiln::zoo
