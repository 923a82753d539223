// add_rmsnorm_fp8: residual add, RMSNorm and fp8 quantization with 1x128 scales, for bf16
// x[T, H], residual[T, H], w[H] (H a multiple of 128):
//   h            = bf16(x + residual)                       -> residual_out[T, H] (bf16)
//   y            = h / sqrt(mean(h²) + eps) · w             (h as rounded, in double)
//   scales[t, g] = max(|y[t, 128g .. 128g+127]|) / 448      (f32; 1 where the group is all 0)
//   q[t, c]      = e4m3(y[t, c] / scales[t, c / 128])       (saturating, nearest even)
// so that y ≈ q · scale. The scale is rounded to f32 before q is computed from it.
#include <cmath>
#include <vector>

#include "kiln/zoo/numeric.h"
#include "kiln/zoo/parallel_for.h"
#include "kiln/zoo/references.h"
#include "tensor_args.h"

namespace kiln::zoo {

int reference_add_rmsnorm_fp8(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                              int n_scalars) {
  if (tensors == nullptr || n_tensors != 6) return KILN_ERR_BAD_ARGUMENT;
  const kiln_scalar* eps = detail::scalar_at(scalars, n_scalars, 1, 0, "eps", KILN_F64);
  const kiln_tensor& x = tensors[0];
  const kiln_tensor& residual = tensors[1];
  const kiln_tensor& w = tensors[2];
  const kiln_tensor& residual_out = tensors[3];
  const kiln_tensor& q = tensors[4];
  const kiln_tensor& scales = tensors[5];
  if (eps == nullptr || !detail::is_tensor(x, KILN_BF16, 2) ||
      !detail::is_tensor(residual, KILN_BF16, 2) || !detail::is_tensor(w, KILN_BF16, 1) ||
      !detail::is_tensor(residual_out, KILN_BF16, 2) || !detail::is_tensor(q, KILN_E4M3, 2) ||
      !detail::is_tensor(scales, KILN_F32, 2)) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t T = x.shape[0], H = x.shape[1];
  if (H % 128 != 0 || !detail::has_shape(residual, {T, H}) || w.shape[0] != H ||
      !detail::has_shape(residual_out, {T, H}) || !detail::has_shape(q, {T, H}) ||
      !detail::has_shape(scales, {T, H / 128})) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const double epsilon = eps->value.f;
  return detail::guarded([&] {
    parallel_for(T, 16, [&](int64_t begin, int64_t end) {
      std::vector<double> row(static_cast<size_t>(H));
      for (int64_t t = begin; t < end; ++t) {
        double squares = 0;
        for (int64_t c = 0; c < H; ++c) {
          const double sum = detail::load(x, detail::offset(x, t, c)) +
                             detail::load(residual, detail::offset(residual, t, c));
          const double h = bf16_to_float(double_to_bf16(sum));
          detail::store(residual_out, detail::offset(residual_out, t, c), h);
          row[static_cast<size_t>(c)] = h;
          squares += h * h;
        }
        const double inverse_rms = 1.0 / std::sqrt(squares / static_cast<double>(H) + epsilon);
        for (int64_t c = 0; c < H; ++c)
          row[static_cast<size_t>(c)] *= inverse_rms * detail::load(w, detail::offset(w, c));
        for (int64_t g = 0; g < H / 128; ++g) {
          double amax = 0;
          for (int64_t c = 128 * g; c < 128 * (g + 1); ++c)
            amax = std::max(amax, std::fabs(row[static_cast<size_t>(c)]));
          const float scale = amax > 0 ? static_cast<float>(amax / 448.0) : 1.0f;
          detail::store(scales, detail::offset(scales, t, g), scale);
          for (int64_t c = 128 * g; c < 128 * (g + 1); ++c) {
            detail::store(q, detail::offset(q, t, c), row[static_cast<size_t>(c)] / scale);
          }
        }
      }
    });
  });
}

}  // namespace kiln::zoo
