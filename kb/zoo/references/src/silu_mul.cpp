// silu_mul: y = gate · sigmoid(gate) · up (bf16 in and out), in double.
#include <cmath>

#include "kiln/zoo/parallel_for.h"
#include "kiln/zoo/references.h"
#include "tensor_args.h"

namespace kiln::zoo {

int reference_silu_mul(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*,
                       int n_scalars) {
  if (tensors == nullptr || n_tensors != 3 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& gate = tensors[0];
  const kiln_tensor& up = tensors[1];
  const kiln_tensor& y = tensors[2];
  if (!detail::is_tensor(gate, KILN_BF16, 1) || !detail::is_tensor(up, KILN_BF16, 1) ||
      !detail::is_tensor(y, KILN_BF16, 1) || up.shape[0] != gate.shape[0] ||
      y.shape[0] != gate.shape[0]) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  return detail::guarded([&] {
    parallel_for(gate.shape[0], 1 << 16, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const double g = detail::load(gate, detail::offset(gate, i));
        const double u = detail::load(up, detail::offset(up, i));
        detail::store(y, detail::offset(y, i), g / (1.0 + std::exp(-g)) * u);
      }
    });
  });
}

}  // namespace kiln::zoo
