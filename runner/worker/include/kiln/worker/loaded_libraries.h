// Which shared objects a process has loaded, and which of them a task bans. The candidate host
// never loads the baseline (cuBLAS lives only in the verifier), so a banned library showing up
// there was brought in by the candidate, whatever way it found to load it without naming it in
// its own symbols (banned_symbols gate).
#pragma once

#include <set>
#include <string>
#include <vector>

namespace kiln::worker {

class LoadedLibraries {
 public:
  // The file names (no folder) of the objects loaded now that were not in the last answer.
  std::vector<std::string> new_since_last();

 private:
  std::set<std::string> seen_;
};

// One sentence per library of `loaded` whose name, without a leading "lib", starts with one of
// the task's banned prefixes ("cublas" bans libcublas.so.13 and libcublasLt.so.13).
std::vector<std::string> banned_among(const std::vector<std::string>& loaded,
                                      const std::vector<std::string>& banned_prefixes);

}  // namespace kiln::worker
