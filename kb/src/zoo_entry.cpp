#include "kiln/kb/zoo_entry.h"

#include <algorithm>
#include <regex>
#include <sstream>

#include "kiln/base/file.h"

namespace kiln::kb {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::vector<std::string> string_list(const json& meta, const char* key) {
  std::vector<std::string> out;
  auto it = meta.find(key);
  if (it == meta.end() || !it->is_array()) return out;
  for (const auto& item : *it)
    if (item.is_string()) out.push_back(item.get<std::string>());
  return out;
}

std::string string_field(const json& meta, const char* key) {
  auto it = meta.find(key);
  return it != meta.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

const std::vector<std::string>& zoo_entry_files() {
  static const std::vector<std::string> files = {"kernel.cu", "meta.json", "NOTES.md"};
  return files;
}

Result<ZooEntry> parse_zoo_entry(const std::string& id, const std::string& meta_json) {
  ZooEntry entry;
  entry.id = id;
  json meta = json::parse(meta_json, nullptr, false);
  if (meta.is_discarded() || !meta.is_object())
    return make_error("zoo entry `" + entry.id +
                      "`: meta.json is not a JSON object; fix its syntax");
  entry.title = string_field(meta, "title");
  entry.op = string_field(meta, "op");
  if (entry.title.empty() || entry.op.empty())
    return make_error("zoo entry `" + entry.id +
                      "`: meta.json needs string fields `title` and `op`");
  if (auto named = string_field(meta, "id"); !named.empty() && named != entry.id)
    entry.warnings.push_back("meta.json says id `" + named + "` but the folder is `" + entry.id +
                             "`; the folder wins");
  entry.techniques = string_list(meta, "techniques");
  entry.arch = string_field(meta, "arch");
  entry.dtypes = string_list(meta, "dtypes");
  entry.description = string_field(meta, "description");
  entry.related = string_list(meta, "related");
  if (auto it = meta.find("measured"); it != meta.end() && it->is_array()) entry.measured = *it;
  return entry;
}

Result<ZooEntry> load_zoo_entry(const fs::path& dir, bool with_sources) {
  std::string id = dir.filename().string();
  auto text = read_file(dir / "meta.json");
  if (!text)
    return make_error("zoo entry `" + id + "`: no meta.json; see kb/zoo/README.md for the format");
  auto parsed = parse_zoo_entry(id, *text);
  if (!parsed) return parsed;
  ZooEntry entry = std::move(*parsed);
  if (with_sources) {
    if (auto notes = read_file(dir / "NOTES.md"))
      entry.notes = std::move(*notes);
    else
      entry.warnings.push_back("no NOTES.md");
    if (auto kernel = read_file(dir / "kernel.cu"))
      entry.kernel = std::move(*kernel);
    else
      entry.warnings.push_back("no kernel.cu");
  }
  return entry;
}

std::vector<std::string> list_zoo_ids(const fs::path& zoo_dir) {
  std::vector<std::string> ids;
  std::error_code error;
  for (fs::directory_iterator it(zoo_dir, error), end; !error && it != end; it.increment(error)) {
    if (it->is_directory() && fs::exists(it->path() / "meta.json"))
      ids.push_back(it->path().filename().string());
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

Result<std::string> read_zoo_file(const fs::path& zoo_dir, const std::string& id,
                                  const std::string& file) {
  const auto& files = zoo_entry_files();
  if (std::find(files.begin(), files.end(), file) == files.end())
    return make_error("unknown zoo file `" + file +
                      "`; an entry has kernel.cu, meta.json and NOTES.md");
  std::vector<std::string> ids = list_zoo_ids(zoo_dir);
  if (std::find(ids.begin(), ids.end(), id) == ids.end()) {
    auto close = closest_names(id, ids, 5);
    std::string message = "no zoo entry `" + id + "`";
    if (!close.empty()) {
      message += "; did you mean: ";
      for (size_t i = 0; i < close.size(); ++i) message += (i ? ", " : "") + close[i];
    } else if (!ids.empty()) {
      message += "; the entries are: ";
      for (size_t i = 0; i < ids.size() && i < 60; ++i) message += (i ? ", " : "") + ids[i];
    }
    return make_error(message + " (search_zoo finds entries by topic)");
  }
  auto text = read_file(zoo_dir / id / file);
  if (!text)
    return make_error("zoo entry `" + id + "` has no " + file + " yet; try another file of it");
  return text;
}

ZooVocabulary load_zoo_vocabulary(const fs::path& zoo_dir) {
  ZooVocabulary vocabulary;
  if (auto text = read_file(zoo_dir / "techniques.json")) {
    json techniques = json::parse(*text, nullptr, false);
    if (techniques.is_object()) {
      for (const auto& [name, definition] : techniques.items())
        vocabulary.techniques[name] = definition.is_string() ? definition.get<std::string>() : "";
    }
  }
  if (auto readme = read_file(zoo_dir / "README.md")) {
    // Rows of the op table: "| `gemm_tn` | ...".
    static const std::regex kRow(R"(^\|\s*`([a-z0-9_]+)`\s*\|)");
    std::istringstream lines(*readme);
    std::string line;
    while (std::getline(lines, line)) {
      std::smatch match;
      if (std::regex_search(line, match, kRow)) vocabulary.ops.push_back(match[1].str());
    }
  }
  return vocabulary;
}

}  // namespace kiln::kb
