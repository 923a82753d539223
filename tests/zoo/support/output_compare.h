// Compares a kernel's output with the reference's, element by element:
//   floating: |actual - expected| <= atol + rtol * |expected|; where the reference is NaN
//     or infinite the output must be the same (NaN, or the same infinity); where it is
//     finite the output must be finite;
//   integer: exactly equal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "host_tensor.h"

namespace kiln::zoo {

struct Mismatch {
  int64_t index;
  double expected;
  double actual;
};

struct Comparison {
  std::string tensor;
  std::vector<int64_t> shape;
  int64_t checked = 0;
  int64_t mismatches = 0;
  int64_t unexpected_nonfinite = 0;  // NaN or infinity where the reference is finite
  double max_abs_error = 0;          // over finite pairs
  double max_rel_error = 0;          // over finite pairs with a nonzero reference
  int64_t max_abs_index = -1;
  std::vector<Mismatch> first;  // the first few mismatches, by index

  bool passed() const { return mismatches == 0; }
  // One paragraph: counts, worst errors and the first mismatches with their indices.
  std::string describe(double atol, double rtol) const;
};

// `rows`, when given, limits the check to those rows (row r = elements
// [r*row_length, (r+1)*row_length)).
Comparison compare_outputs(const HostTensor& expected, const HostTensor& actual, double atol,
                           double rtol, const std::optional<std::vector<int64_t>>& rows = {},
                           int64_t row_length = 0, size_t max_reported = 10);

// The number of NaN and infinite elements of a floating-point tensor (0 for integer ones)
// and the index of the first; for the rows a sampled comparison does not look at.
struct NonFinite {
  int64_t count = 0;
  int64_t first = -1;
};
NonFinite find_nonfinite(const HostTensor& tensor);

// The elements outside `rows` (row r = elements [r*row_length, (r+1)*row_length)) with a byte
// other than `fill`: for an op that writes only those rows, where the rest of the output must
// keep what it held before the launch (the harness's poison). `first` is an element index.
struct ChangedOutside {
  int64_t count = 0;
  int64_t first = -1;
};
ChangedOutside find_changed_outside_rows(const HostTensor& tensor, const std::vector<int64_t>& rows,
                                         int64_t row_length, unsigned char fill);

}  // namespace kiln::zoo
