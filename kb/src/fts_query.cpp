#include "kiln/kb/fts_query.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace kiln::kb {

namespace {

constexpr size_t kMaxTerms = 16;
constexpr size_t kMaxCompounds = 8;
constexpr size_t kMaxTermBytes = 64;

bool is_stop_word(const std::string& word) {
  static const std::set<std::string> kStop = {
      "a",     "an",    "and",  "are",  "as",  "at",    "be", "by",   "can",
      "do",    "does",  "for",  "from", "how", "i",     "in", "is",   "it",
      "of",    "on",    "or",   "that", "the", "this",  "to", "what", "when",
      "where", "which", "with", "why",  "use", "using", "my", "me",   "not"};
  return kStop.count(word) != 0;
}

}  // namespace

FtsQuery make_fts_query(std::string_view text, bool compounds) {
  std::vector<std::string> words;
  std::vector<std::string> sequence;  // every word in order, repeats and stop words included
  std::string word;
  auto flush = [&]() {
    if (!word.empty() && word.size() <= kMaxTermBytes) {
      sequence.push_back(word);
      if (std::find(words.begin(), words.end(), word) == words.end()) words.push_back(word);
    }
    word.clear();
  };
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) || byte >= 0x80) {
      word += static_cast<char>(std::tolower(byte));
    } else {
      flush();
    }
  }
  flush();
  std::vector<std::string> kept;
  for (const auto& w : words)
    if (!is_stop_word(w)) kept.push_back(w);
  if (kept.empty()) kept = words;
  if (kept.size() > kMaxTerms) kept.resize(kMaxTerms);
  if (compounds) {
    size_t added = 0;
    for (size_t i = 0; i + 1 < sequence.size() && added < kMaxCompounds; ++i) {
      const std::string& a = sequence[i];
      const std::string& b = sequence[i + 1];
      if (is_stop_word(a) || is_stop_word(b)) continue;
      std::string joined = a + b;
      if (joined.size() > kMaxTermBytes ||
          std::find(kept.begin(), kept.end(), joined) != kept.end())
        continue;
      kept.push_back(std::move(joined));
      ++added;
    }
  }

  FtsQuery query;
  query.terms = kept;
  for (size_t i = 0; i < kept.size(); ++i)
    query.expression += (i ? " OR \"" : "\"") + kept[i] + "\"";
  return query;
}

}  // namespace kiln::kb
