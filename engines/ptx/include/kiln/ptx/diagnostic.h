// A parser message tied to a PTX line and column.
#pragma once

#include <string>
#include <string_view>

#include "kiln/ptx/source_location.h"

namespace kiln::ptx {

enum class Severity { Warning, Error };

struct Diagnostic {
  Severity severity = Severity::Error;
  SourceLocation location;
  std::string message;  // what was wrong and, where it helps, what was expected

  // "kernel.ptx:12:5: error: expected ';' ..." (the compiler convention editors understand).
  std::string to_string(std::string_view source_name) const;

  bool operator==(const Diagnostic&) const = default;
};

}  // namespace kiln::ptx
