#include "tensor_args.h"

#include <cstring>
#include <unordered_set>

namespace kiln::zoo::detail {

bool is_tensor(const kiln_tensor& t, kiln_dtype dtype, int rank) {
  if (t.dtype != dtype || t.rank != rank || rank < 0 || rank > KILN_MAX_RANK) return false;
  for (int d = 0; d < rank; ++d) {
    if (t.shape[d] < 0) return false;
  }
  return t.data != nullptr || element_count(t) == 0;
}

bool has_shape(const kiln_tensor& t, std::initializer_list<int64_t> shape) {
  if (static_cast<int64_t>(shape.size()) != t.rank) return false;
  int d = 0;
  for (const int64_t extent : shape) {
    if (t.shape[d++] != extent) return false;
  }
  return true;
}

int64_t element_count(const kiln_tensor& t) {
  int64_t count = 1;
  for (int d = 0; d < t.rank && d < KILN_MAX_RANK; ++d) count *= t.shape[d];
  return count;
}

const kiln_scalar* scalar_at(const kiln_scalar* scalars, int n_scalars, int count, int index,
                             const char* name, kiln_dtype dtype) {
  if (scalars == nullptr || n_scalars != count || index < 0 || index >= count) return nullptr;
  const kiln_scalar& s = scalars[index];
  if (s.dtype != dtype) return nullptr;
  if (s.name != nullptr && std::strcmp(s.name, name) != 0) return nullptr;
  return &s;
}

bool valid_rows(std::span<const int64_t> rows, int64_t limit) {
  std::unordered_set<int64_t> seen;
  for (const int64_t row : rows) {
    if (row < 0 || row >= limit || !seen.insert(row).second) return false;
  }
  return true;
}

}  // namespace kiln::zoo::detail
