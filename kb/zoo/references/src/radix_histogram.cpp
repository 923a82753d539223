// radix_histogram: the counting step of one LSD radix-sort pass. keys[N] (i32, read as their
// unsigned 32-bit pattern) and shift (i64 in 0..24) give counts[256] (i32): counts[d] is the
// number of keys whose digit ((uint32)key >> shift) & 255 equals d.
#include <cstdint>
#include <cstring>
#include <vector>

#include "kiln/zoo/references.h"
#include "tensor_args.h"

namespace kiln::zoo {

int reference_radix_histogram(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                              int n_scalars) {
  if (tensors == nullptr || n_tensors != 2) return KILN_ERR_BAD_ARGUMENT;
  const kiln_scalar* shift = detail::scalar_at(scalars, n_scalars, 1, 0, "shift", KILN_I64);
  if (shift == nullptr || shift->value.i < 0 || shift->value.i > 24) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor &keys = tensors[0], &counts = tensors[1];
  if (!detail::is_tensor(keys, KILN_I32, 1) || !detail::is_tensor(counts, KILN_I32, 1) ||
      counts.shape[0] != 256 || keys.shape[0] > INT32_MAX) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  std::vector<int64_t> histogram(256, 0);
  const auto* in = static_cast<const int32_t*>(keys.data);
  for (int64_t i = 0; i < keys.shape[0]; ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, &in[i * keys.strides[0]], sizeof bits);
    ++histogram[(bits >> shift->value.i) & 255u];
  }
  for (int64_t d = 0; d < 256; ++d) {
    detail::store(counts, detail::offset(counts, d),
                  static_cast<double>(histogram[static_cast<size_t>(d)]));
  }
  return KILN_OK;
}

}  // namespace kiln::zoo
