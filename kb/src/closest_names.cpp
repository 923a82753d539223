#include "kiln/kb/closest_names.h"

#include <algorithm>
#include <cctype>
#include <tuple>

namespace kiln::kb {

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<std::string> closest_names(const std::string& wanted,
                                       const std::vector<std::string>& candidates, size_t count) {
  // Words of a name: "gemm_warp_specialized" -> {gemm, warp, specialized}; "mbarrier.try_wait"
  // likewise.
  auto words = [](const std::string& name) {
    std::vector<std::string> out;
    std::string word;
    for (char c : name + "_") {
      if (c == '_' || c == '.' || c == '-' || c == ':') {
        if (!word.empty()) out.push_back(word);
        word.clear();
      } else {
        word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
    }
    return out;
  };
  const std::vector<std::string> wanted_words = words(wanted);
  struct Scored {
    size_t shared;
    size_t distance;
    std::string name;
  };
  std::vector<Scored> scored;
  const size_t limit = std::max<size_t>(3, wanted.size() / 3);
  for (const auto& name : candidates) {
    // A shared word scores 2; a near miss ("wrap" for "warp") 1.
    size_t shared = 0;
    for (const auto& word : words(name)) {
      size_t best = 0;
      for (const auto& w : wanted_words) {
        if (w == word)
          best = 2;
        else if (best == 0 && w.size() >= 4 && word.size() >= 4 && edit_distance(w, word) <= 2)
          best = 1;
      }
      shared += best;
    }
    bool contains = !wanted.empty() && (name.find(wanted) != std::string::npos ||
                                        wanted.find(name) != std::string::npos);
    size_t distance = contains ? 0 : edit_distance(wanted, name);
    if (shared == 0 && distance > limit) continue;
    scored.push_back({shared, distance, name});
  }
  // Containment first, then most shared words, then fewest edits.
  auto key = [](const Scored& s) {
    return std::tuple(s.distance != 0, -static_cast<long>(s.shared), s.distance, s.name);
  };
  std::sort(scored.begin(), scored.end(),
            [&](const Scored& a, const Scored& b) { return key(a) < key(b); });
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && out.size() < count; ++i) out.push_back(scored[i].name);
  return out;
}

}  // namespace kiln::kb
