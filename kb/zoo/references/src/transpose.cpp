// transpose: y[c, r] = x[r, c] (f32, copied exactly).
#include "kiln/zoo/parallel_for.h"
#include "kiln/zoo/references.h"
#include "tensor_args.h"

namespace kiln::zoo {

int reference_transpose(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*,
                        int n_scalars) {
  if (tensors == nullptr || n_tensors != 2 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& x = tensors[0];
  const kiln_tensor& y = tensors[1];
  if (!detail::is_tensor(x, KILN_F32, 2) || !detail::is_tensor(y, KILN_F32, 2) ||
      !detail::has_shape(y, {x.shape[1], x.shape[0]})) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t R = x.shape[0], C = x.shape[1];
  return detail::guarded([&] {
    parallel_for(R, 64, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        for (int64_t c = 0; c < C; ++c) {
          detail::store(y, detail::offset(y, c, r), detail::load(x, detail::offset(x, r, c)));
        }
      }
    });
  });
}

}  // namespace kiln::zoo
