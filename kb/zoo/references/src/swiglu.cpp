// swiglu: y[t, f] = silu(x[t, f]) · x[t, F + f] for x[T, 2F] (bf16), y[T, F] (bf16), in double.
// The layout of a fused gate/up projection: the gate half of each row first, the up half after.
#include <cmath>

#include "kiln/zoo/parallel_for.h"
#include "kiln/zoo/references.h"
#include "tensor_args.h"

namespace kiln::zoo {

int reference_swiglu(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int n_scalars) {
  if (tensors == nullptr || n_tensors != 2 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& x = tensors[0];
  const kiln_tensor& y = tensors[1];
  if (!detail::is_tensor(x, KILN_BF16, 2) || !detail::is_tensor(y, KILN_BF16, 2) ||
      x.shape[1] % 2 != 0 || !detail::has_shape(y, {x.shape[0], x.shape[1] / 2})) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t T = y.shape[0], F = y.shape[1];
  return detail::guarded([&] {
    parallel_for(T, 16, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        for (int64_t f = 0; f < F; ++f) {
          const double g = detail::load(x, detail::offset(x, t, f));
          const double u = detail::load(x, detail::offset(x, t, F + f));
          detail::store(y, detail::offset(y, t, f), g / (1.0 + std::exp(-g)) * u);
        }
      }
    });
  });
}

}  // namespace kiln::zoo
