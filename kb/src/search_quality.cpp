#include "kiln/kb/search_quality.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "kiln/base/file.h"
#include "kiln/base/text.h"

namespace kiln::kb {

using json = nlohmann::json;

namespace {

constexpr size_t kTop = 3;

bool answers(const SearchCase& c, const std::string& id) {
  return id == c.expect || std::find(c.also.begin(), c.also.end(), id) != c.also.end();
}

std::string percent(size_t part, size_t whole) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f%%", whole ? 100.0 * part / whole : 0.0);
  return buffer;
}

}  // namespace

Result<std::vector<SearchCase>> load_search_cases(const std::filesystem::path& path) {
  auto text = read_file(path);
  if (!text) return make_error("cannot read the query set " + path.string());
  json doc = json::parse(*text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("queries") ||
      !doc["queries"].is_array())
    return make_error(path.string() + ": want {\"queries\": [{\"query\", \"expect\"}, ...]}");
  std::vector<SearchCase> cases;
  for (const auto& item : doc["queries"]) {
    if (!item.is_object() || !item.value("query", json()).is_string() ||
        !item.value("expect", json()).is_string())
      return make_error(path.string() +
                        ": a case without string `query` and `expect`: " + item.dump());
    SearchCase c{item["query"].get<std::string>(), item["expect"].get<std::string>()};
    for (const auto& id : item.value("also", json::array()))
      if (id.is_string()) c.also.push_back(id.get<std::string>());
    cases.push_back(std::move(c));
  }
  return cases;
}

SearchQuality score_search(
    const std::vector<SearchCase>& cases,
    const std::function<std::vector<std::string>(const std::string& query)>& search) {
  SearchQuality quality;
  for (const auto& c : cases) {
    std::vector<std::string> got = search(c.query);
    if (got.size() > kTop) got.resize(kTop);
    int rank = 0;
    for (size_t i = 0; i < got.size() && rank == 0; ++i)
      if (answers(c, got[i])) rank = static_cast<int>(i) + 1;
    ++quality.cases;
    quality.top1 += rank == 1;
    quality.top3 += rank >= 1;
    if (rank != 1) quality.misses.push_back({c, std::move(got), rank});
  }
  return quality;
}

json SearchQuality::to_json() const {
  json misses_json = json::array();
  for (const auto& miss : misses)
    misses_json.push_back({{"query", miss.search_case.query},
                           {"expect", miss.search_case.expect},
                           {"got", miss.got},
                           {"rank", miss.rank}});
  return json{{"cases", cases},
              {"top1", top1},
              {"top3", top3},
              {"top1_rate", top1_rate()},
              {"top3_rate", top3_rate()},
              {"misses", misses_json}};
}

std::string SearchQuality::report() const {
  std::ostringstream out;
  for (const auto& miss : misses)
    out << (miss.rank ? "rank " + std::to_string(miss.rank) : std::string("MISSED")) << ": \""
        << miss.search_case.query << "\" wants " << miss.search_case.expect << ", got "
        << (miss.got.empty() ? "nothing" : join(miss.got, ", ")) << "\n";
  out << "top-1 " << top1 << "/" << cases << " (" << percent(top1, cases) << "), top-3 " << top3
      << "/" << cases << " (" << percent(top3, cases) << ")\n";
  return out.str();
}

}  // namespace kiln::kb
