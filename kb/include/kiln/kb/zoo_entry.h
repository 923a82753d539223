// Zoo entries (kb/zoo/ID/{meta.json,NOTES.md,kernel.cu}) and the zoo's vocabulary
// (techniques.json, the op table of README.md). See kb/zoo/README.md.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/kb/closest_names.h"

namespace kiln::kb {

struct ZooEntry {
  std::string id;  // the folder's name
  std::string title;
  std::string op;
  std::vector<std::string> techniques;
  std::string arch;
  std::vector<std::string> dtypes;
  std::string description;
  std::vector<std::string> related;
  nlohmann::json measured = nlohmann::json::array();
  std::string notes;                  // NOTES.md; empty when missing
  std::string kernel;                 // kernel.cu; empty when missing
  std::vector<std::string> warnings;  // non-fatal problems (id mismatch, missing files)
};

// The files an entry may have, in the order tools list them.
const std::vector<std::string>& zoo_entry_files();

// An entry from its meta.json text; `id` is the folder's name.
Result<ZooEntry> parse_zoo_entry(const std::string& id, const std::string& meta_json);

// Reads meta.json (required: title, op) and, when `with_sources`, NOTES.md and kernel.cu.
Result<ZooEntry> load_zoo_entry(const std::filesystem::path& dir, bool with_sources = true);

// Entry folders (those holding a meta.json), sorted by name.
std::vector<std::string> list_zoo_ids(const std::filesystem::path& zoo_dir);

// The text of one entry file (kernel.cu, meta.json or NOTES.md). Errors: an unknown
// id (with the closest ids), a file name outside zoo_entry_files(), a missing file.
Result<std::string> read_zoo_file(const std::filesystem::path& zoo_dir, const std::string& id,
                                  const std::string& file);

struct ZooVocabulary {
  std::map<std::string, std::string> techniques;  // name -> definition (techniques.json)
  std::vector<std::string> ops;                   // the README's op table
};

// A missing or malformed file yields an empty part, never an error: the index
// then accepts whatever the entries use.
ZooVocabulary load_zoo_vocabulary(const std::filesystem::path& zoo_dir);

}  // namespace kiln::kb
