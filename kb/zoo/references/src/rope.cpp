// rope: rotary position embedding, half-split (GPT-NeoX / Llama) layout, on bf16
// q[T, HQ, D] and k[T, HK, D] with an f32 cache cos[P, D/2], sin[P, D/2] indexed by
// positions[T] (int32, each in [0, P)). For i < D/2 and p = positions[t]:
//   out[i]       = x[i] · cos[p, i] - x[i + D/2] · sin[p, i]
//   out[i + D/2] = x[i + D/2] · cos[p, i] + x[i] · sin[p, i]
// Outputs q_out, k_out (bf16), in double, rounded once. D must be even.
#include "kiln/zoo/parallel_for.h"
#include "kiln/zoo/references.h"
#include "tensor_args.h"

namespace kiln::zoo {
namespace {

void rotate(const kiln_tensor& x, const kiln_tensor& out, const kiln_tensor& cos,
            const kiln_tensor& sin, int64_t t, int64_t p) {
  const int64_t heads = x.shape[1], half = x.shape[2] / 2;
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t i = 0; i < half; ++i) {
      const double a = detail::load(x, detail::offset(x, t, h, i));
      const double b = detail::load(x, detail::offset(x, t, h, i + half));
      const double c = detail::load(cos, detail::offset(cos, p, i));
      const double s = detail::load(sin, detail::offset(sin, p, i));
      detail::store(out, detail::offset(out, t, h, i), a * c - b * s);
      detail::store(out, detail::offset(out, t, h, i + half), b * c + a * s);
    }
  }
}

}  // namespace

int reference_rope(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int n_scalars) {
  if (tensors == nullptr || n_tensors != 7 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& q = tensors[0];
  const kiln_tensor& k = tensors[1];
  const kiln_tensor& positions = tensors[2];
  const kiln_tensor& cos = tensors[3];
  const kiln_tensor& sin = tensors[4];
  const kiln_tensor& q_out = tensors[5];
  const kiln_tensor& k_out = tensors[6];
  if (!detail::is_tensor(q, KILN_BF16, 3) || !detail::is_tensor(k, KILN_BF16, 3) ||
      !detail::is_tensor(positions, KILN_I32, 1) || !detail::is_tensor(cos, KILN_F32, 2) ||
      !detail::is_tensor(sin, KILN_F32, 2) || !detail::is_tensor(q_out, KILN_BF16, 3) ||
      !detail::is_tensor(k_out, KILN_BF16, 3)) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t T = q.shape[0], D = q.shape[2], P = cos.shape[0];
  if (D % 2 != 0 || k.shape[0] != T || k.shape[2] != D || positions.shape[0] != T ||
      !detail::has_shape(cos, {P, D / 2}) || !detail::has_shape(sin, {P, D / 2}) ||
      !detail::has_shape(q_out, {T, q.shape[1], D}) ||
      !detail::has_shape(k_out, {T, k.shape[1], D})) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  for (int64_t t = 0; t < T; ++t) {
    const double p = detail::load(positions, detail::offset(positions, t));
    if (p < 0 || p >= static_cast<double>(P)) return KILN_ERR_BAD_ARGUMENT;
  }
  return detail::guarded([&] {
    parallel_for(T, 16, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const auto p = static_cast<int64_t>(detail::load(positions, detail::offset(positions, t)));
        rotate(q, q_out, cos, sin, t, p);
        rotate(k, k_out, cos, sin, t, p);
      }
    });
  });
}

}  // namespace kiln::zoo
