// A position in PTX text: 1-based line and column (columns count bytes).
#pragma once

#include <cstdint>

namespace kiln::ptx {

struct SourceLocation {
  uint32_t line = 0;  // 0: unknown (built in memory, not parsed)
  uint32_t column = 0;

  bool operator==(const SourceLocation&) const = default;
};

}  // namespace kiln::ptx
