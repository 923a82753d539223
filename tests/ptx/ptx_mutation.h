// Mutations of PTX text for the randomized robustness tests (the parser and analyses here,
// the synccheck engine in tests/check): delete, duplicate, swap and replace tokens and lines,
// truncate, insert random bytes.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "kiln/ptx/lexer.h"

namespace kiln::ptx::testing {

struct Span {
  size_t begin, end;
};

inline std::vector<Span> token_spans(const std::string& text) {
  std::vector<Span> spans;
  for (const Token& t : tokenize(text).tokens) {
    if (t.kind != TokenKind::End) spans.push_back({t.offset, t.offset + t.text.size()});
  }
  return spans;
}

inline std::vector<Span> line_spans(const std::string& text) {
  std::vector<Span> spans;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end + 1;
    spans.push_back({start, end});
    start = end;
  }
  return spans;
}

inline std::string mutate(const std::string& text, const std::vector<Span>& tokens,
                          const std::vector<Span>& lines, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  std::string out = text;
  const int rounds = 1 + static_cast<int>(pick(3));
  for (int r = 0; r < rounds; ++r) {
    const std::vector<Span>& units = pick(2) == 0 ? tokens : lines;
    if (units.size() < 2 || out.size() != text.size()) {
      // After the first edit offsets move; later edits work on raw bytes.
      if (out.empty()) return out;
      const size_t at = pick(out.size());
      switch (pick(4)) {
        case 0:
          out.erase(at, 1 + pick(8));
          break;
        case 1:
          out.insert(at, 1, static_cast<char>(pick(256)));
          break;
        case 2:
          out[at] = "{}[]();,:.%@!|<>=-+_$\"/*"[pick(24)];
          break;
        default:
          out.resize(at);
          break;
      }
      continue;
    }
    const Span a = units[pick(units.size())];
    const Span b = units[pick(units.size())];
    switch (pick(6)) {
      case 0:  // delete
        out.erase(a.begin, a.end - a.begin);
        break;
      case 1:  // duplicate
        out.insert(a.end, out.substr(a.begin, a.end - a.begin) + " ");
        break;
      case 2: {  // swap two units
        if (a.begin == b.begin) break;
        const Span first = a.begin < b.begin ? a : b;
        const Span second = a.begin < b.begin ? b : a;
        if (first.end > second.begin) break;
        const std::string s1 = out.substr(first.begin, first.end - first.begin);
        const std::string s2 = out.substr(second.begin, second.end - second.begin);
        out.replace(second.begin, s2.size(), s1);
        out.replace(first.begin, s1.size(), s2);
        break;
      }
      case 3:  // truncate
        out.resize(a.begin);
        break;
      case 4: {  // random bytes
        std::string junk;
        for (size_t i = 0, n = 1 + pick(4); i < n; ++i) junk += static_cast<char>(pick(256));
        out.insert(a.begin, junk);
        break;
      }
      default:  // replace with another unit
        out.replace(a.begin, a.end - a.begin, text.substr(b.begin, b.end - b.begin));
        break;
    }
  }
  return out;
}

}  // namespace kiln::ptx::testing
