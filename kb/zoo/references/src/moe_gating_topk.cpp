// moe_gating_topk: the router of a mixture-of-experts layer. For each token t of logits[T, E]
// (f32): the K experts with the largest logits, in descending order, ties broken by lower
// expert index (selection is on the logits, so it does not depend on how softmax rounds), and
// their softmax probabilities over all E experts; with renormalize = 1 the K weights are then
// divided by their sum (which equals a softmax over the K chosen logits). Double math, each
// weight rounded once. NaN logits are not supported (BAD_ARGUMENT).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "kiln/zoo/parallel_for.h"
#include "kiln/zoo/references.h"
#include "tensor_args.h"

namespace kiln::zoo {

int reference_moe_gating_topk(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                              int n_scalars) {
  if (tensors == nullptr || n_tensors != 3) return KILN_ERR_BAD_ARGUMENT;
  const kiln_scalar* renormalize =
      detail::scalar_at(scalars, n_scalars, 1, 0, "renormalize", KILN_I64);
  if (renormalize == nullptr || (renormalize->value.i != 0 && renormalize->value.i != 1)) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const kiln_tensor &logits = tensors[0], &weights = tensors[1], &indices = tensors[2];
  if (!detail::is_tensor(logits, KILN_F32, 2) || !detail::is_tensor(weights, KILN_F32, 2) ||
      !detail::is_tensor(indices, KILN_I32, 2) || weights.shape[0] != logits.shape[0] ||
      weights.shape[1] > logits.shape[1] ||
      !detail::has_shape(indices, {weights.shape[0], weights.shape[1]})) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t T = logits.shape[0], E = logits.shape[1], K = weights.shape[1];
  for (int64_t i = 0; i < T * E; ++i) {
    if (std::isnan(detail::load(logits, detail::offset(logits, i / E, i % E))))
      return KILN_ERR_BAD_ARGUMENT;
  }
  return detail::guarded([&] {
    parallel_for(T, 64, [&](int64_t begin, int64_t end) {
      std::vector<double> row(static_cast<size_t>(E));
      std::vector<int64_t> order(static_cast<size_t>(E));
      for (int64_t t = begin; t < end; ++t) {
        for (int64_t e = 0; e < E; ++e)
          row[static_cast<size_t>(e)] = detail::load(logits, detail::offset(logits, t, e));
        std::iota(order.begin(), order.end(), int64_t{0});
        std::partial_sort(order.begin(), order.begin() + K, order.end(), [&](int64_t a, int64_t b) {
          const double va = row[static_cast<size_t>(a)], vb = row[static_cast<size_t>(b)];
          return va != vb ? va > vb : a < b;
        });
        const double max = E > 0 ? row[static_cast<size_t>(order[0])] : 0;
        double all = 0, chosen = 0;
        for (int64_t e = 0; e < E; ++e) all += std::exp(row[static_cast<size_t>(e)] - max);
        for (int64_t k = 0; k < K; ++k)
          chosen += std::exp(row[static_cast<size_t>(order[static_cast<size_t>(k)])] - max);
        const double denominator = renormalize->value.i == 1 ? chosen : all;
        for (int64_t k = 0; k < K; ++k) {
          const int64_t e = order[static_cast<size_t>(k)];
          detail::store(weights, detail::offset(weights, t, k),
                        std::exp(row[static_cast<size_t>(e)] - max) / denominator);
          detail::store(indices, detail::offset(indices, t, k), static_cast<double>(e));
        }
      }
    });
  });
}

}  // namespace kiln::zoo
