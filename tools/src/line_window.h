// A window of whole lines cut from a text so a tool's output stays under the ~10 KB
// that MCP clients show, with the line numbers needed to ask for the rest.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kiln::tools {

// The byte budget for file or section text in one tool result; the text view adds
// line numbers and a header, and each view must stay under 10 KB.
inline constexpr size_t kDefaultTextBudget = 7500;
// The most an explicit line range may return.
inline constexpr size_t kMaxTextBudget = 40000;

struct LineWindow {
  int start_line = 1;  // 1-based, inclusive
  int end_line = 0;    // inclusive; start_line - 1 when the window is empty
  int total_lines = 0;
  std::string text;        // the lines, each ending in '\n'
  bool truncated = false;  // lines after end_line exist
};

// Lines start_line..end_line (end_line 0: to the end) of `text`, stopping early
// before the window's bytes would exceed `budget` (at least one line is returned,
// cut at `budget` bytes if it alone is longer).
LineWindow line_window(std::string_view text, int start_line, int end_line, size_t budget);

// The window with right-aligned line numbers: "  12| code".
std::string numbered(const LineWindow& window);

}  // namespace kiln::tools
