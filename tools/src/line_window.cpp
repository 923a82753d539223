#include "line_window.h"

#include <algorithm>
#include <cstdio>

namespace kiln::tools {

LineWindow line_window(std::string_view text, int start_line, int end_line, size_t budget) {
  LineWindow window;
  window.start_line = std::max(1, start_line);
  int line = 0;
  size_t at = 0;
  bool stopped = false;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    size_t next = end == std::string_view::npos ? text.size() : end + 1;
    ++line;
    std::string_view content = text.substr(at, next - at);
    at = next;
    if (line < window.start_line || stopped) continue;
    if (end_line > 0 && line > end_line) {
      stopped = true;
      continue;
    }
    if (window.text.size() + content.size() > budget) {
      if (window.text.empty()) {  // one very long line: show its start
        window.text = std::string(content.substr(0, budget)) + "…\n";
        window.end_line = line;
      }
      stopped = true;
      continue;
    }
    window.text += content;
    if (window.text.back() != '\n') window.text += '\n';
    window.end_line = line;
  }
  window.total_lines = line;
  if (window.end_line < window.start_line) window.end_line = window.start_line - 1;
  window.truncated = window.end_line < window.total_lines;
  return window;
}

std::string numbered(const LineWindow& window) {
  std::string out;
  int width = static_cast<int>(std::to_string(std::max(1, window.end_line)).size());
  int line = window.start_line;
  size_t at = 0;
  while (at < window.text.size()) {
    size_t end = window.text.find('\n', at);
    if (end == std::string::npos) end = window.text.size();
    char prefix[16];
    std::snprintf(prefix, sizeof prefix, "%*d| ", width, line++);
    out += prefix;
    out.append(window.text, at, end - at);
    out += '\n';
    at = end + 1;
  }
  return out;
}

}  // namespace kiln::tools
