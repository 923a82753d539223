#include "kiln/replay/command_line.h"

namespace kiln::replay {

Result<std::vector<std::string>> split_command_line(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < text.size()) {
        word += text[++i];
      } else {
        word += c;
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '\\' && i + 1 < text.size()) {
      word += text[++i];
    } else {
      word += c;
    }
  }
  if (quote) return make_error(std::string("--against: the ") + quote + " quote is never closed");
  if (in_word) words.push_back(std::move(word));
  if (words.empty())
    return make_error("--against is empty; pass the server command, e.g. \"kiln mcp\"");
  return words;
}

}  // namespace kiln::replay
