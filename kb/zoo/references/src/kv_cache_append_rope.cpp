// kv_cache_append_rope: the KV-cache write of a decode (or chunked prefill) step. For each new
// token t < T at position p = positions[t] (int32, distinct, each in [0, S)):
//   k_cache[p, h, :] = rope(k_new[t, h, :], p)      (half-split, as the rope op: for i < D/2,
//                        out[i] = x[i]·cos[p,i] - x[i+D/2]·sin[p,i],
//                        out[i+D/2] = x[i+D/2]·cos[p,i] + x[i]·sin[p,i])
//   v_cache[p, h, :] = v_new[t, h, :]
// with bf16 k_new, v_new[T, HK, D], f32 cos, sin[S, D/2] and bf16 k_cache, v_cache[S, HK, D].
// Only rows positions[t] of the caches are written: every other row holds earlier tokens and
// is left as it was (here: untouched). Positions that repeat or fall outside [0, S) are
// KILN_ERR_BAD_ARGUMENT (two tokens writing one row have no defined result).
#include <unordered_set>

#include "kiln/zoo/parallel_for.h"
#include "kiln/zoo/references.h"
#include "tensor_args.h"

namespace kiln::zoo {
namespace {

void append(const kiln_tensor& k, const kiln_tensor& v, const kiln_tensor& cos,
            const kiln_tensor& sin, const kiln_tensor& k_cache, const kiln_tensor& v_cache,
            int64_t t, int64_t p) {
  const int64_t heads = k.shape[1], D = k.shape[2], half = D / 2;
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t i = 0; i < half; ++i) {
      const double a = detail::load(k, detail::offset(k, t, h, i));
      const double b = detail::load(k, detail::offset(k, t, h, i + half));
      const double c = detail::load(cos, detail::offset(cos, p, i));
      const double s = detail::load(sin, detail::offset(sin, p, i));
      detail::store(k_cache, detail::offset(k_cache, p, h, i), a * c - b * s);
      detail::store(k_cache, detail::offset(k_cache, p, h, i + half), b * c + a * s);
    }
    for (int64_t i = 0; i < D; ++i) {
      detail::store(v_cache, detail::offset(v_cache, p, h, i),
                    detail::load(v, detail::offset(v, t, h, i)));
    }
  }
}

}  // namespace

int reference_kv_cache_append_rope(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*,
                                   int n_scalars) {
  if (tensors == nullptr || n_tensors != 7 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& k = tensors[0];
  const kiln_tensor& v = tensors[1];
  const kiln_tensor& positions = tensors[2];
  const kiln_tensor& cos = tensors[3];
  const kiln_tensor& sin = tensors[4];
  const kiln_tensor& k_cache = tensors[5];
  const kiln_tensor& v_cache = tensors[6];
  if (!detail::is_tensor(k, KILN_BF16, 3) || !detail::is_tensor(v, KILN_BF16, 3) ||
      !detail::is_tensor(positions, KILN_I32, 1) || !detail::is_tensor(cos, KILN_F32, 2) ||
      !detail::is_tensor(sin, KILN_F32, 2) || !detail::is_tensor(k_cache, KILN_BF16, 3) ||
      !detail::is_tensor(v_cache, KILN_BF16, 3)) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t T = k.shape[0], HK = k.shape[1], D = k.shape[2], S = k_cache.shape[0];
  if (D % 2 != 0 || !detail::has_shape(v, {T, HK, D}) || positions.shape[0] != T ||
      !detail::has_shape(cos, {S, D / 2}) || !detail::has_shape(sin, {S, D / 2}) ||
      !detail::has_shape(k_cache, {S, HK, D}) || !detail::has_shape(v_cache, {S, HK, D})) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  std::unordered_set<int64_t> seen;
  for (int64_t t = 0; t < T; ++t) {
    const double p = detail::load(positions, detail::offset(positions, t));
    if (p < 0 || p >= static_cast<double>(S) || !seen.insert(static_cast<int64_t>(p)).second)
      return KILN_ERR_BAD_ARGUMENT;
  }
  return detail::guarded([&] {
    parallel_for(T, 16, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const auto p = static_cast<int64_t>(detail::load(positions, detail::offset(positions, t)));
        append(k, v, cos, sin, k_cache, v_cache, t, p);
      }
    });
  });
}

}  // namespace kiln::zoo
