// kiln_zoo_record RESULTS.jsonl [--zoo-dir DIR] [--dry-run]
//
// Records GPU measurements in the zoo: each line of RESULTS.jsonl (written by the GPU test
// through KILN_ZOO_RESULTS) goes into kb/zoo/<id>/meta.json's "measured" array, replacing
// an older entry for the same gpu and shape. Every line is checked before any file is
// written; only the "measured" arrays change, and each id recorded with an H200 measurement
// leaves kb/zoo/awaiting_h200.json (awaiting_measurement.h).
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "awaiting_measurement.h"
#include "measured_merge.h"

namespace {

int usage() {
  std::cerr << "usage: kiln_zoo_record RESULTS.jsonl [--zoo-dir DIR] [--dry-run]\n"
               "  RESULTS.jsonl  lines written by kiln_zoo_gpu_test with KILN_ZOO_RESULTS set\n"
               "  --zoo-dir DIR  the zoo to update (default: " KILN_ZOO_SOURCE_DIR
               ")\n"
               "  --dry-run      say what would change, write nothing\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string results;
  std::filesystem::path zoo_dir = KILN_ZOO_SOURCE_DIR;
  bool dry_run = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--zoo-dir" && i + 1 < argc) {
      zoo_dir = argv[++i];
    } else if (arg == "--dry-run") {
      dry_run = true;
    } else if (!arg.empty() && arg[0] != '-' && results.empty()) {
      results = arg;
    } else {
      return usage();
    }
  }
  if (results.empty()) return usage();

  std::ifstream in(results);
  if (!in) {
    std::cerr << "kiln_zoo_record: cannot read " << results << "\n";
    return 1;
  }
  std::map<std::string, std::vector<nlohmann::ordered_json>> by_id;
  std::string line;
  int line_number = 0;
  int bad = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto json = nlohmann::ordered_json::parse(line, nullptr, false);
    auto measurement = kiln::zoo::measurement_from_line(json);
    if (json.is_discarded() || !measurement) {
      std::cerr << results << ":" << line_number << ": "
                << (json.is_discarded() ? std::string("not valid JSON")
                                        : measurement.error().message)
                << "\n";
      ++bad;
      continue;
    }
    const std::string id = json["id"].get<std::string>();
    if (!std::filesystem::exists(zoo_dir / id / "meta.json")) {
      std::cerr << results << ":" << line_number << ": no " << (zoo_dir / id / "meta.json").string()
                << "\n";
      ++bad;
      continue;
    }
    by_id[id].push_back(*measurement);
  }
  if (bad > 0) {
    std::cerr << "kiln_zoo_record: " << bad << " bad line(s); nothing written\n";
    return 1;
  }
  for (const auto& [id, measurements] : by_id) {
    const auto path = zoo_dir / id / "meta.json";
    std::ifstream meta_in(path, std::ios::binary);
    std::ostringstream text;
    text << meta_in.rdbuf();
    kiln::zoo::MergeCount count;
    auto merged = kiln::zoo::merge_measured(text.str(), measurements, count);
    if (!merged) {
      std::cerr << path.string() << ": " << merged.error().message << "\n";
      return 1;
    }
    std::cout << id << ": " << count.added << " added, " << count.replaced << " replaced"
              << (dry_run ? " (dry run)" : "") << "\n";
    if (!dry_run) std::ofstream(path, std::ios::binary | std::ios::trunc) << *merged;
  }
  std::set<std::string> measured_on_h200;
  for (const auto& [id, measurements] : by_id) {
    for (const auto& m : measurements) {
      if (m["gpu"].get<std::string>().find("H200") != std::string::npos)
        measured_on_h200.insert(id);
    }
  }
  const auto awaiting_path = zoo_dir / kiln::zoo::kAwaitingFile;
  if (!measured_on_h200.empty() && std::filesystem::exists(awaiting_path)) {
    std::ifstream list_in(awaiting_path, std::ios::binary);
    std::ostringstream text;
    text << list_in.rdbuf();
    auto kept = kiln::zoo::without_awaiting(text.str(), measured_on_h200);
    if (!kept) {
      std::cerr << awaiting_path.string() << ": " << kept.error().message << "\n";
      return 1;
    }
    if (*kept != text.str()) {
      std::cout << awaiting_path.filename().string() << ": measured entries removed"
                << (dry_run ? " (dry run)" : "") << "\n";
      if (!dry_run) std::ofstream(awaiting_path, std::ios::binary | std::ios::trunc) << *kept;
    }
  }
  return 0;
}
