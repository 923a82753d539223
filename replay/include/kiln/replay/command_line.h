// `--against "CMD ..."` as an argv, without a shell: words split at whitespace, '...' and
// "..." keep what is inside together, a backslash keeps the next character.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::replay {

// An unclosed quote, or nothing at all, is an error.
Result<std::vector<std::string>> split_command_line(std::string_view text);

}  // namespace kiln::replay
