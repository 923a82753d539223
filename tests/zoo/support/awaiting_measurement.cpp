#include "awaiting_measurement.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace kiln::zoo {
namespace {

using Json = nlohmann::ordered_json;

Result<Json> parse(const std::string& text, const std::string& where) {
  const Json json = Json::parse(text, nullptr, false);
  if (json.is_discarded() || !json.is_object() || !json.contains("entries") ||
      !json["entries"].is_array()) {
    return Error{where + ": not {\"why\": ..., \"entries\": [ids]}; fix its format"};
  }
  for (const Json& id : json["entries"]) {
    if (!id.is_string() || id.get<std::string>().empty())
      return Error{where + ": entries holds " + id.dump() + "; list entry ids as strings"};
  }
  return json;
}

}  // namespace

Result<std::set<std::string>> load_awaiting(const std::filesystem::path& zoo_dir) {
  const auto path = zoo_dir / kAwaitingFile;
  std::set<std::string> ids;
  if (!std::filesystem::exists(path)) return ids;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  auto json = parse(text.str(), path.string());
  if (!json) return json.error();
  for (const Json& id : (*json)["entries"]) ids.insert(id.get<std::string>());
  return ids;
}

Result<std::string> without_awaiting(const std::string& text, const std::set<std::string>& ids) {
  auto json = parse(text, kAwaitingFile);
  if (!json) return json.error();
  Json kept = Json::array();
  for (const Json& id : (*json)["entries"]) {
    if (ids.count(id.get<std::string>()) == 0) kept.push_back(id);
  }
  if (kept.size() == (*json)["entries"].size()) return text;
  (*json)["entries"] = kept;
  return json->dump(2) + "\n";
}

}  // namespace kiln::zoo
