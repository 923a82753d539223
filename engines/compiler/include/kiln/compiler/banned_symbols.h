// The banned_symbols gate at link time: a candidate whose shared object defines or
// references a symbol the task bans (name prefixes from task.json, C++ names compared
// after demangling, so "cutlass" catches cutlass::gemm::...), or that needs a banned
// library (libcublas.so.13 matches "cublas"), is refused before it ever runs.
//
// Beyond the task's list, the worker refuses for every candidate the few C functions
// that would let it get round the check or the harness: loading libraries at run time
// (dlopen, dlsym, ...: a later dlopen("libcublas.so") is invisible here) and starting
// programs (system, popen, fork, exec*: nvidia-smi could change clocks).
#pragma once

#include <string>
#include <vector>

#include "kiln/compiler/elf_symbols.h"

namespace kiln::compiler {

struct BannedHit {
  std::string symbol;     // as stored
  std::string demangled;  // the readable name (same as symbol for C names)
  std::string rule;       // the prefix or name that matched
  std::string where;      // "defines" | "references" | "needs library"
  std::string reason;     // why the rule exists
};

class BannedSymbols {
 public:
  explicit BannedSymbols(std::vector<std::string> task_prefixes, bool worker_rules = true);

  std::vector<BannedHit> scan(const ElfSymbols& symbols) const;
  // One sentence per hit (at most `limit`), naming the symbol and what to do.
  static std::string describe(const std::vector<BannedHit>& hits, size_t limit = 5);

  // True when an identifier inside `demangled` (a run of [A-Za-z0-9_] not preceded by one)
  // starts with `prefix`, or the raw name does.
  static bool matches_prefix(const std::string& raw, const std::string& demangled,
                             const std::string& prefix);

 private:
  std::vector<std::string> prefixes_;
  bool worker_rules_;
};

}  // namespace kiln::compiler
