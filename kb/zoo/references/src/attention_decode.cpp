// attention_decode: one query token per (batch, query head) against a KV cache, with grouped
// query heads. Q[B, HQ, D], K and V [B, HK, S, D] (f16 or bf16), O[B, HQ, D]; HQ a multiple of
// HK, query head h reading KV head h / (HQ / HK). O = softmax(q·Kᵀ·scale)·V, in double, each
// O element rounded once.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kiln/zoo/parallel_for.h"
#include "kiln/zoo/references.h"
#include "tensor_args.h"

namespace kiln::zoo {
namespace {

bool valid(const kiln_tensor* t, int n_tensors, const kiln_scalar* scalars, int n_scalars) {
  if (t == nullptr || n_tensors != 4) return false;
  if (detail::scalar_at(scalars, n_scalars, 1, 0, "scale", KILN_F64) == nullptr) return false;
  const kiln_dtype dtype = t[0].dtype;
  if (dtype != KILN_F16 && dtype != KILN_BF16) return false;
  const kiln_tensor &q = t[0], &k = t[1], &v = t[2], &o = t[3];
  if (!detail::is_tensor(q, dtype, 3) || !detail::is_tensor(k, dtype, 4) ||
      !detail::is_tensor(v, dtype, 4) || !detail::is_tensor(o, dtype, 3)) {
    return false;
  }
  const int64_t B = q.shape[0], HQ = q.shape[1], D = q.shape[2], HK = k.shape[1];
  if (!detail::has_shape(k, {B, HK, k.shape[2], D}) ||
      !detail::has_shape(v, {B, HK, k.shape[2], D}) || !detail::has_shape(o, {B, HQ, D})) {
    return false;
  }
  return HK > 0 ? HQ % HK == 0 : HQ == 0;
}

}  // namespace

int reference_attention_decode(const kiln_tensor* tensors, int n_tensors,
                               const kiln_scalar* scalars, int n_scalars) {
  if (!valid(tensors, n_tensors, scalars, n_scalars)) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor &q = tensors[0], &k = tensors[1], &v = tensors[2], &o = tensors[3];
  const double scale = scalars[0].value.f;
  const int64_t B = q.shape[0], HQ = q.shape[1], D = q.shape[2];
  const int64_t HK = k.shape[1], S = k.shape[2];
  if (B * HQ * D == 0) return KILN_OK;
  const int64_t group = HQ / HK;
  return detail::guarded([&] {
    parallel_for(B * HQ, 1, [&](int64_t begin, int64_t end) {
      std::vector<double> scores(static_cast<size_t>(S)), query(static_cast<size_t>(D)),
          out(static_cast<size_t>(D));
      for (int64_t row = begin; row < end; ++row) {
        const int64_t b = row / HQ, h = row % HQ, kv = h / group;
        for (int64_t d = 0; d < D; ++d)
          query[static_cast<size_t>(d)] = detail::load(q, detail::offset(q, b, h, d));
        double max = -std::numeric_limits<double>::infinity();
        for (int64_t s = 0; s < S; ++s) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d)
            dot += query[static_cast<size_t>(d)] * detail::load(k, detail::offset(k, b, kv, s, d));
          scores[static_cast<size_t>(s)] = dot * scale;
          max = std::max(max, dot * scale);
        }
        std::fill(out.begin(), out.end(), 0.0);
        double sum = 0;
        for (int64_t s = 0; s < S; ++s) {
          const double p = std::exp(scores[static_cast<size_t>(s)] - max);
          sum += p;
          for (int64_t d = 0; d < D; ++d)
            out[static_cast<size_t>(d)] += p * detail::load(v, detail::offset(v, b, kv, s, d));
        }
        // S = 0: no key to attend to; the output is defined as 0.
        for (int64_t d = 0; d < D; ++d) {
          detail::store(o, detail::offset(o, b, h, d),
                        S > 0 ? out[static_cast<size_t>(d)] / sum : 0.0);
        }
      }
    });
  });
}

}  // namespace kiln::zoo
