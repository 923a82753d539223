// Argument checks and element access shared by the references (internal).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>

#include "kiln/abi.h"
#include "kiln/zoo/numeric.h"

namespace kiln::zoo::detail {

// True when `t` has this dtype and rank, non-negative extents, and data unless empty.
bool is_tensor(const kiln_tensor& t, kiln_dtype dtype, int rank);
// True when t.shape equals `shape` (whose length is the rank already checked).
bool has_shape(const kiln_tensor& t, std::initializer_list<int64_t> shape);
int64_t element_count(const kiln_tensor& t);

// The scalar at `index`, when there are exactly `count` scalars, it has `dtype`, and its
// name (when given) is `name`; nullptr otherwise.
const kiln_scalar* scalar_at(const kiln_scalar* scalars, int n_scalars, int count, int index,
                             const char* name, kiln_dtype dtype);

// True when every row is in [0, limit) and none repeats.
bool valid_rows(std::span<const int64_t> rows, int64_t limit);

inline int64_t offset(const kiln_tensor& t, int64_t i) { return i * t.strides[0]; }
inline int64_t offset(const kiln_tensor& t, int64_t i, int64_t j) {
  return i * t.strides[0] + j * t.strides[1];
}
inline int64_t offset(const kiln_tensor& t, int64_t i, int64_t j, int64_t k) {
  return i * t.strides[0] + j * t.strides[1] + k * t.strides[2];
}
inline int64_t offset(const kiln_tensor& t, int64_t i, int64_t j, int64_t k, int64_t l) {
  return i * t.strides[0] + j * t.strides[1] + k * t.strides[2] + l * t.strides[3];
}

inline double load(const kiln_tensor& t, int64_t element) {
  return decode_element(t.dtype, t.data, element);
}
inline void store(const kiln_tensor& t, int64_t element, double value) {
  encode_element(t.dtype, t.data, element, value);
}

}  // namespace kiln::zoo::detail

#include <new>
#include <numeric>
#include <vector>

namespace kiln::zoo::detail {

// Runs `work`, mapping running out of host memory to KILN_ERR_UNSUPPORTED.
template <typename Work>
int guarded(Work&& work) {
  try {
    work();
  } catch (const std::bad_alloc&) {
    return KILN_ERR_UNSUPPORTED;
  }
  return KILN_OK;
}

// 0, 1, ..., count-1: "every row" for the row references.
inline std::vector<int64_t> all_rows(int64_t count) {
  std::vector<int64_t> rows(static_cast<size_t>(count));
  std::iota(rows.begin(), rows.end(), int64_t{0});
  return rows;
}

}  // namespace kiln::zoo::detail
