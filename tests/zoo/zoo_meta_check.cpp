// kiln_zoo_meta_check ZOO_DIR: checks every entry of the kernel zoo (kb/zoo/ID/) — its
// meta.json against kb/zoo/README.md and the op table, techniques against
// techniques.json, NOTES.md and kernel.cu present — and prints every problem. Exit status
// 0 when all entries are valid, 1 otherwise. The ctest `zoo_meta_valid` runs it.
//
// A bundled entry must also carry at least one measurement on an H200 ("measured", written by
// kiln_zoo_record from the GPU test's results): search_zoo shows those numbers to agents, and an
// entry without them makes the README's promise untrue. meta.json itself may hold [] while an
// entry is written; this check is what keeps such an entry out of the bundled zoo, unless it is
// listed in kb/zoo/awaiting_h200.json (awaiting_measurement.h): written and checked on the CPU,
// its H200 run still to come. Such an entry is reported "ok ... (awaiting H200 measurement)";
// a listed entry that has an H200 measurement, or a listed id with no entry, fails.
#include <iostream>
#include <set>
#include <string>

#include "awaiting_measurement.h"
#include "zoo_meta.h"

namespace {

bool measured_on_h200(const kiln::zoo::ZooMeta& meta) {
  for (const auto& m : meta.measured) {
    const auto gpu = m.find("gpu");
    if (gpu != m.end() && gpu->is_string() &&
        gpu->get<std::string>().find("H200") != std::string::npos)
      return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: kiln_zoo_meta_check ZOO_DIR   (e.g. kb/zoo)\n";
    return 2;
  }
  const std::filesystem::path zoo_dir = argv[1];
  std::vector<std::string> setup_problems;
  const std::set<std::string> techniques = kiln::zoo::load_techniques(zoo_dir, setup_problems);
  for (const auto& problem : setup_problems) std::cout << "FAIL " << problem << "\n";
  if (!setup_problems.empty()) return 1;

  const auto awaiting = kiln::zoo::load_awaiting(zoo_dir);
  if (!awaiting) {
    std::cout << "FAIL " << awaiting.error().message << "\n";
    return 1;
  }
  const auto entries = kiln::zoo::find_zoo_entries(zoo_dir);
  std::set<std::string> ids;
  for (const auto& entry : entries) ids.insert(entry.filename().string());
  int failed = 0;
  int bad_list = 0;  // listed ids without an entry
  for (const auto& id : *awaiting) {
    if (ids.count(id) != 0) continue;
    std::cout << "FAIL " << kiln::zoo::kAwaitingFile << ": lists '" << id
              << "', which is no zoo entry; remove it from the list\n";
    ++bad_list;
  }
  for (const auto& entry : entries) {
    const std::string id = entry.filename().string();
    kiln::zoo::MetaCheck check = kiln::zoo::check_zoo_entry(entry, techniques, ids);
    const bool listed = awaiting->count(id) != 0;
    const bool measured = check.meta && measured_on_h200(*check.meta);
    if (check.problems.empty() && listed && measured) {
      check.problems.push_back(std::string("meta.json: measured: has an H200 measurement but ") +
                               kiln::zoo::kAwaitingFile +
                               " lists the entry as awaiting one; remove it from that list");
    } else if (check.problems.empty() && check.meta && !measured && !listed) {
      check.problems.push_back(
          "meta.json: measured: no measurement on an NVIDIA H200; run the GPU test with "
          "KILN_ZOO_RESULTS=FILE (tests/gpu/README.md) and record it with kiln_zoo_record FILE");
    }
    for (const auto& warning : check.warnings) std::cout << "warn " << id << "/" << warning << "\n";
    if (check.problems.empty()) {
      std::cout << "ok   " << id << (listed ? " (awaiting H200 measurement)" : "") << "\n";
      continue;
    }
    ++failed;
    for (const auto& problem : check.problems) std::cout << "FAIL " << id << "/" << problem << "\n";
  }
  std::cout << entries.size() - static_cast<size_t>(failed) << " of " << entries.size()
            << " zoo entries valid";
  if (!awaiting->empty()) std::cout << " (" << awaiting->size() << " awaiting H200 measurement)";
  if (failed + bad_list > 0) std::cout << "; fix the FAIL lines above (format: kb/zoo/README.md)";
  std::cout << "\n";
  return failed + bad_list == 0 ? 0 : 1;
}
