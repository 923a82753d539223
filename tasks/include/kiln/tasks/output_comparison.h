// Comparing an output with what it should be, element by element, under a Tolerance (the
// task's, task.h; the rule per element is element_check.h). ErrorStats is what a workload
// reports under "errors".
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/abi.h"
#include "kiln/tasks/task.h"

namespace kiln::tasks {

struct Mismatch {
  std::vector<int64_t> index;  // multi-index into the output
  double expected = 0;
  double actual = 0;
};

struct ErrorStats {
  int64_t checked = 0;     // elements compared
  int64_t mismatches = 0;  // elements outside tolerance
  int64_t far = 0;         // of those, outside kNearMissFactor x tolerance (element_far)
  int64_t nan = 0;         // NaN elements in the output
  int64_t inf = 0;         // infinite elements in the output
  int64_t poisoned = 0;    // elements still holding the poison pattern (never written)
  int64_t stray = 0;       // of the mismatches, elements written in rows that must stay poisoned
  double max_abs = 0;      // over finite pairs
  double max_rel = 0;      // over finite pairs with expected != 0
  std::vector<Mismatch> first_mismatches;  // at most kMaxListed, lowest flat index first

  static constexpr size_t kMaxListed = 8;

  // At most max_mismatch_fraction of the checked elements mismatch, none of them far.
  bool passes(double max_mismatch_fraction) const;
  void merge(const ErrorStats& other);
  nlohmann::json to_json() const;
  // "3 of 16777216 elements outside atol + rtol*|ref| (max abs error 0.5 at [1, 2]: ...)".
  std::string summary() const;
};

// Compares dense row-major host buffers of `elements` elements. `shape` turns flat
// indices into multi-indices for the report; `row_ids`, when given, maps the first
// dimension to the row numbers of the full output (for sampled rows). `ignored_rows`, when
// given, flags rows of these buffers (one per first-dim index) outside the contract
// (task.json "ignore_rows_where"): their elements are neither compared nor counted; rows
// flagged kRowUntouched (tensor_layout.h) must still hold `poison_pattern`, and each element
// that does not is a far mismatch (counted in `stray`).
ErrorStats compare_host(const void* actual, const void* expected, kiln_dtype dtype,
                        int64_t elements, const std::vector<int64_t>& shape,
                        const Tolerance& tolerance, uint64_t poison_pattern,
                        const std::vector<int64_t>* row_ids = nullptr,
                        const std::vector<uint8_t>* ignored_rows = nullptr);

// Elements that differ bitwise between two runs (for the determinism gate).
int64_t count_bitwise_differences(const void* a, const void* b, kiln_dtype dtype, int64_t elements);

}  // namespace kiln::tasks
