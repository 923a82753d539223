// moe_unpermute: the combine after the experts of a mixture-of-experts layer. The expert
// outputs y[T*K, H] (f16 or bf16, in moe_permute's expert-contiguous order), dest_rows[T, K]
// (i32 rows of y in [0, T*K), as moe_permute wrote them) and the router's weights[T, K] (f32)
// give out[t, :] = Σ_k weights[t, k] · y[dest_rows[t, k], :], in double, rounded once. A gather
// per token: no atomics, so the result is deterministic.
#include <vector>

#include "kiln/zoo/parallel_for.h"
#include "kiln/zoo/references.h"
#include "tensor_args.h"

namespace kiln::zoo {

int reference_moe_unpermute(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*,
                            int n_scalars) {
  if (tensors == nullptr || n_tensors != 4 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor &y = tensors[0], &dest = tensors[1], &weights = tensors[2], &out = tensors[3];
  const kiln_dtype dtype = y.dtype;
  if ((dtype != KILN_F16 && dtype != KILN_BF16) || !detail::is_tensor(y, dtype, 2) ||
      !detail::is_tensor(dest, KILN_I32, 2) || !detail::is_tensor(weights, KILN_F32, 2) ||
      !detail::is_tensor(out, dtype, 2)) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t T = dest.shape[0], K = dest.shape[1], H = y.shape[1];
  if (y.shape[0] != T * K || !detail::has_shape(weights, {T, K}) ||
      !detail::has_shape(out, {T, H})) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  for (int64_t i = 0; i < T * K; ++i) {
    const double row = detail::load(dest, detail::offset(dest, i / K, i % K));
    if (row < 0 || row >= static_cast<double>(T * K)) return KILN_ERR_BAD_ARGUMENT;
  }
  return detail::guarded([&] {
    parallel_for(T, 16, [&](int64_t begin, int64_t end) {
      std::vector<double> sum(static_cast<size_t>(H));
      for (int64_t t = begin; t < end; ++t) {
        std::fill(sum.begin(), sum.end(), 0.0);
        for (int64_t k = 0; k < K; ++k) {
          const auto row = static_cast<int64_t>(detail::load(dest, detail::offset(dest, t, k)));
          const double w = detail::load(weights, detail::offset(weights, t, k));
          for (int64_t h = 0; h < H; ++h)
            sum[static_cast<size_t>(h)] += w * detail::load(y, detail::offset(y, row, h));
        }
        for (int64_t h = 0; h < H; ++h)
          detail::store(out, detail::offset(out, t, h), sum[static_cast<size_t>(h)]);
      }
    });
  });
}

}  // namespace kiln::zoo
