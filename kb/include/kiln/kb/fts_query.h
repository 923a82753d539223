// Free text to a safe FTS5 query. Only word characters survive (ASCII letters and
// digits, and any non-ASCII byte); each word becomes a quoted FTS5 string, joined
// with OR so BM25 ranks documents that match more words higher. Quotes, `*`,
// `NEAR(`, `-`, `:` and FTS5 keywords therefore never reach the parser as syntax.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kiln::kb {

struct FtsQuery {
  std::vector<std::string> terms;  // lowercase words, in order, without repeats
  std::string expression;          // "\"mbarrier\" OR \"parity\"", empty when no terms
  bool empty() const { return terms.empty(); }
};

// Common English words are dropped unless nothing else is left; at most 16 terms. With
// `compounds`, each two adjacent words (neither a common one) are also searched for as one word,
// after the words themselves (at most 8 more): how people split what the zoo writes as one name
// ("split-K", "ping pong", "layer norm" for split_k, pingpong, layernorm).
FtsQuery make_fts_query(std::string_view text, bool compounds = false);

}  // namespace kiln::kb
