// The Landlock half of kiln_confine, through the raw system calls (glibc has no wrappers and the
// Debian 12 headers stop at ABI 2; the rights of later ABIs are spelled out in the .cpp).
#pragma once

#include <string>
#include <vector>

#include "kiln/base/confine.h"
#include "kiln/base/result.h"

namespace kiln::confine_detail {

// The ABI version; 0 when the kernel has no Landlock (ENOSYS) or it is disabled (EOPNOTSUPP).
int query_landlock_abi();

struct LandlockOutcome {
  bool all_threads = false;
  std::vector<std::string> notes;
};

// Builds the ruleset of `policy` for ABI `abi` (>= 1) and restricts every thread it can reach:
// at once through LANDLOCK_RESTRICT_SELF_TSYNC on ABI 8 and later, else each other thread on a
// signal (restrict_all_threads.h) and then the calling thread. The calling thread must have
// no_new_privs set (and the others too, which seccomp's TSYNC does).
Result<LandlockOutcome> apply_landlock(const ConfinePolicy& policy, int abi);

}  // namespace kiln::confine_detail
