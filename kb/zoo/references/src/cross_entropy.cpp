// cross_entropy: loss[r] = logsumexp(logits[r, :]) - logits[r, targets[r]] for bf16
// logits[R, V] and int32 targets[R] (each in [0, V)), fp32 loss[R]; in double, the
// maximum subtracted first. A target outside [0, V) is KILN_ERR_BAD_ARGUMENT (the op has no
// ignore index).
#include <cmath>
#include <limits>

#include "kiln/zoo/parallel_for.h"
#include "kiln/zoo/references.h"
#include "tensor_args.h"

namespace kiln::zoo {

int reference_cross_entropy(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*,
                            int n_scalars) {
  if (tensors == nullptr || n_tensors != 3 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& logits = tensors[0];
  const kiln_tensor& targets = tensors[1];
  const kiln_tensor& loss = tensors[2];
  if (!detail::is_tensor(logits, KILN_BF16, 2) || !detail::is_tensor(targets, KILN_I32, 1) ||
      !detail::is_tensor(loss, KILN_F32, 1) || targets.shape[0] != logits.shape[0] ||
      loss.shape[0] != logits.shape[0] || (logits.shape[1] == 0 && logits.shape[0] > 0)) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t R = logits.shape[0], V = logits.shape[1];
  for (int64_t r = 0; r < R; ++r) {
    const double target = detail::load(targets, detail::offset(targets, r));
    if (target < 0 || target >= static_cast<double>(V)) return KILN_ERR_BAD_ARGUMENT;
  }
  return detail::guarded([&] {
    parallel_for(R, 1, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        double max = -std::numeric_limits<double>::infinity();
        for (int64_t v = 0; v < V; ++v)
          max = std::max(max, detail::load(logits, detail::offset(logits, r, v)));
        double sum = 0;
        for (int64_t v = 0; v < V; ++v)
          sum += std::exp(detail::load(logits, detail::offset(logits, r, v)) - max);
        const auto target = static_cast<int64_t>(detail::load(targets, detail::offset(targets, r)));
        const double picked = detail::load(logits, detail::offset(logits, r, target));
        detail::store(loss, detail::offset(loss, r), max + std::log(sum) - picked);
      }
    });
  });
}

}  // namespace kiln::zoo
