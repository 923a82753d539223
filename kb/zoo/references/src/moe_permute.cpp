// moe_permute: tokens into expert-contiguous order for a mixture-of-experts layer. x[T, H]
// (f16 or bf16) and the router's indices[T, K] (i32 experts in [0, E)) give
//   expert_offsets[E + 1]: the start of each expert's rows (offsets[0] = 0, offsets[E] = T*K);
//   x_sorted[T*K, H]: row r is the token routed to slot r, expert by expert, and within one
//     expert in increasing order of t*K + k (a stable sort by expert: deterministic);
//   dest_rows[T, K]: the row of x_sorted that (t, k) went to (what moe_unpermute gathers).
// A token may name one expert twice (it is then copied twice).
#include <vector>

#include "kiln/zoo/references.h"
#include "tensor_args.h"

namespace kiln::zoo {

int reference_moe_permute(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*,
                          int n_scalars) {
  if (tensors == nullptr || n_tensors != 5 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor &x = tensors[0], &indices = tensors[1], &x_sorted = tensors[2],
                    &offsets = tensors[3], &dest = tensors[4];
  const kiln_dtype dtype = x.dtype;
  if ((dtype != KILN_F16 && dtype != KILN_BF16) || !detail::is_tensor(x, dtype, 2) ||
      !detail::is_tensor(indices, KILN_I32, 2) || !detail::is_tensor(x_sorted, dtype, 2) ||
      !detail::is_tensor(offsets, KILN_I32, 1) || !detail::is_tensor(dest, KILN_I32, 2)) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t T = x.shape[0], H = x.shape[1], K = indices.shape[1], E = offsets.shape[0] - 1;
  if (E < 0 || indices.shape[0] != T || !detail::has_shape(x_sorted, {T * K, H}) ||
      !detail::has_shape(dest, {T, K})) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  std::vector<int64_t> count(static_cast<size_t>(E) + 1, 0);
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t k = 0; k < K; ++k) {
      const double e = detail::load(indices, detail::offset(indices, t, k));
      if (e < 0 || e >= static_cast<double>(E)) return KILN_ERR_BAD_ARGUMENT;
      ++count[static_cast<size_t>(e) + 1];
    }
  }
  for (int64_t e = 0; e < E; ++e)
    count[static_cast<size_t>(e) + 1] += count[static_cast<size_t>(e)];
  for (int64_t e = 0; e <= E; ++e)
    detail::store(offsets, detail::offset(offsets, e),
                  static_cast<double>(count[static_cast<size_t>(e)]));
  // count[e] is now the next free row of expert e; (t, k) in increasing order keeps it stable.
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t k = 0; k < K; ++k) {
      const auto e = static_cast<size_t>(detail::load(indices, detail::offset(indices, t, k)));
      const int64_t row = count[e]++;
      detail::store(dest, detail::offset(dest, t, k), static_cast<double>(row));
      for (int64_t h = 0; h < H; ++h) {
        detail::store(x_sorted, detail::offset(x_sorted, row, h),
                      detail::load(x, detail::offset(x, t, h)));
      }
    }
  }
  return KILN_OK;
}

}  // namespace kiln::zoo
