// Splits PTX text into tokens. Comments and whitespace are dropped.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "kiln/ptx/diagnostic.h"
#include "kiln/ptx/token.h"

namespace kiln::ptx {

struct LexOutput {
  std::vector<Token> tokens;        // always ends with one End token
  std::optional<Diagnostic> error;  // the first malformed token; tokens stop before it
};

// Never fails hard: bytes PTX cannot contain, unterminated strings or comments and malformed
// numbers end the token stream with an error that names the line and column.
LexOutput tokenize(std::string_view text);

}  // namespace kiln::ptx
