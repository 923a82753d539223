// Output poisoning: before every call the harness fills each output with a NaN whose
// payload arithmetic never produces (not the canonical NaN a kernel would write), and
// alternates between two such patterns from call to call. An element that still holds
// the pattern afterwards was never written; a kernel cannot learn to skip work by
// recognising "its" leftover output, because the next call's poison differs.
// Integer dtypes have no NaN: their patterns are unlikely byte values instead.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/abi.h"

namespace kiln::tasks {

class PoisonPattern {
 public:
  // Pattern 0 or 1 (call number modulo 2), as the element's bits.
  static uint64_t bits(kiln_dtype dtype, int which);
  // Pattern for the call numbered `call`.
  static uint64_t for_call(kiln_dtype dtype, int64_t call) {
    return bits(dtype, static_cast<int>(call & 1));
  }

  static void fill_host(void* data, int64_t elements, kiln_dtype dtype, uint64_t pattern);
  // Elements whose bits equal `pattern`.
  static int64_t count_host(const void* data, int64_t elements, kiln_dtype dtype, uint64_t pattern);
};

}  // namespace kiln::tasks
