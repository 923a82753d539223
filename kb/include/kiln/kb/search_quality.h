// How well search_zoo answers what agents ask: a query set (kb/zoo/search_queries.json, each
// query with the entry it should find) scored as top-1 and top-3 accuracy. The search itself
// is passed in, so the test and the bench score the search_zoo tool exactly as agents call it.
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::kb {

struct SearchCase {
  std::string query;
  std::string expect;               // the entry that should come first
  std::vector<std::string> also{};  // other entries that answer it as well
};

struct SearchMiss {
  SearchCase search_case;
  std::vector<std::string> got;  // the ids returned, best first
  int rank = 0;                  // 1-based rank of the first right id; 0 when none came back
};

struct SearchQuality {
  size_t cases = 0, top1 = 0, top3 = 0;
  std::vector<SearchMiss> misses;  // every case not answered first, in query-set order
  double top1_rate() const { return cases ? static_cast<double>(top1) / cases : 0; }
  double top3_rate() const { return cases ? static_cast<double>(top3) / cases : 0; }
  nlohmann::json to_json() const;
  std::string report() const;  // the misses, one line each, then the two rates
};

// Errors: an unreadable file, or a case without `query` and `expect`.
Result<std::vector<SearchCase>> load_search_cases(const std::filesystem::path& path);

// `search` returns the ids for a query, best first; only the first three are looked at.
SearchQuality score_search(
    const std::vector<SearchCase>& cases,
    const std::function<std::vector<std::string>(const std::string& query)>& search);

}  // namespace kiln::kb
