// softmax: y[r, :] = exp(x[r, :] - max) / Σ exp(x[r, :] - max), in double, rounded to f32.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kiln/zoo/parallel_for.h"
#include "kiln/zoo/references.h"
#include "tensor_args.h"

namespace kiln::zoo {

int reference_softmax(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*,
                      int n_scalars) {
  if (tensors == nullptr || n_tensors != 2 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& x = tensors[0];
  const kiln_tensor& y = tensors[1];
  if (!detail::is_tensor(x, KILN_F32, 2) || !detail::is_tensor(y, KILN_F32, 2) ||
      !detail::has_shape(y, {x.shape[0], x.shape[1]})) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t R = x.shape[0], C = x.shape[1];
  return detail::guarded([&] {
    parallel_for(R, 16, [&](int64_t begin, int64_t end) {
      std::vector<double> e(static_cast<size_t>(C));
      for (int64_t r = begin; r < end; ++r) {
        double max = -std::numeric_limits<double>::infinity();
        for (int64_t c = 0; c < C; ++c) {
          e[static_cast<size_t>(c)] = detail::load(x, detail::offset(x, r, c));
          max = std::max(max, e[static_cast<size_t>(c)]);
        }
        double sum = 0;
        for (auto& v : e) {
          v = std::exp(v - max);
          sum += v;
        }
        for (int64_t c = 0; c < C; ++c) {
          detail::store(y, detail::offset(y, r, c), e[static_cast<size_t>(c)] / sum);
        }
      }
    });
  });
}

}  // namespace kiln::zoo
