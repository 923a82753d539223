// The process environment around loading a candidate's library. A constructor in the candidate
// runs at dlopen, before CUDA and the baseline's libraries read their settings, and could set
// variables that change how the baseline behaves (cuBLAS 75 us -> 93 us at 4000x3000x2000 on the
// H200 with one such variable, 2026-12-01). The guard takes the environment before the load and,
// after it, puts back every variable the load added, changed or removed, and says which.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace kiln::worker {

class EnvironmentGuard {
 public:
  // The environment now.
  EnvironmentGuard();

  // Puts the environment back as it was at construction; one sentence per variable that had
  // been added, changed or removed (empty when nothing changed). Values are not repeated, as
  // they may be secrets; the names are.
  std::vector<std::string> restore() const;

 private:
  std::map<std::string, std::string> taken_;
};

}  // namespace kiln::worker
