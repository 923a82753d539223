// scan: inclusive prefix sum of int32 values, wrapping modulo 2^32 as GPU int32 adds do.
#include <cstdint>
#include <cstring>

#include "kiln/zoo/references.h"
#include "tensor_args.h"

namespace kiln::zoo {

int reference_scan(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int n_scalars) {
  if (tensors == nullptr || n_tensors != 2 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& x = tensors[0];
  const kiln_tensor& y = tensors[1];
  if (!detail::is_tensor(x, KILN_I32, 1) || !detail::is_tensor(y, KILN_I32, 1) ||
      y.shape[0] != x.shape[0]) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const auto* in = static_cast<const int32_t*>(x.data);
  auto* out = static_cast<int32_t*>(y.data);
  uint32_t sum = 0;  // unsigned: wrap-around is defined
  for (int64_t i = 0; i < x.shape[0]; ++i) {
    sum += static_cast<uint32_t>(in[i * x.strides[0]]);
    int32_t value = 0;
    std::memcpy(&value, &sum, sizeof value);  // the same bits, as int32
    out[i * y.strides[0]] = value;
  }
  return KILN_OK;
}

}  // namespace kiln::zoo
