// reduce_sum: y[0] = Σ x, summed in double in index order, rounded once to f32.
#include "kiln/zoo/references.h"
#include "tensor_args.h"

namespace kiln::zoo {

int reference_reduce_sum(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*,
                         int n_scalars) {
  if (tensors == nullptr || n_tensors != 2 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& x = tensors[0];
  const kiln_tensor& y = tensors[1];
  if (!detail::is_tensor(x, KILN_F32, 1) || !detail::is_tensor(y, KILN_F32, 1) ||
      !detail::has_shape(y, {1})) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  double sum = 0;
  for (int64_t i = 0; i < x.shape[0]; ++i) sum += detail::load(x, detail::offset(x, i));
  detail::store(y, 0, sum);
  return KILN_OK;
}

}  // namespace kiln::zoo
