// Runs the CPU reference of an entry's op on a ZooCase: on every output element when the
// shape is cheap enough, else (GEMM-like ops and attention) on a random sample of rows. An op
// that writes only some rows of its outputs (kv_cache_append_rope) is checked on those rows,
// and the others must be left untouched.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "host_tensor.h"
#include "zoo_case.h"

namespace kiln::zoo {

// Multiply-adds the reference may spend on one shape before it samples rows.
inline constexpr int64_t kFullCheckBudget = int64_t{1} << 33;

struct ReferenceRun {
  int status = KILN_OK;              // the reference's return code
  std::string error;                 // what went wrong, when status != KILN_OK
  std::vector<HostTensor> expected;  // the outputs; outside `rows` unset
  // When set, only these rows were computed: row r covers elements
  // [r*row_length, (r+1)*row_length) of every output.
  std::optional<std::vector<int64_t>> rows;
  int64_t row_length = 0;
  // With rows set: true when they are all the op writes (kv_cache_append_rope: the cache rows at
  // `positions`), so every other element must keep the bytes it held before the launch; false
  // when they sample an output that is written everywhere.
  bool others_untouched = false;
  std::string coverage;  // "all elements" or "64 of 8192 rows (sampled)"
};

// `budget`: multiply-adds allowed before sampling; then at least `sample_rows` rows (up
// to 8x that while a quarter of the budget allows) are checked.
ReferenceRun run_reference(const std::string& op, ZooCase& test_case, uint64_t seed,
                           int64_t budget = kFullCheckBudget, int64_t sample_rows = 64);

}  // namespace kiln::zoo
