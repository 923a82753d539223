// quant_fp8_group128: per-token fp8 quantization with one scale per 128 channels (1x128 blocks,
// the activation scaling of DeepSeek-V3-style block-scaled fp8 GEMMs), for bf16 x[T, H] with H
// a multiple of 128:
//   scales[t, g] = max(|x[t, 128g .. 128g+127]|) / 448    (f32; 1 where the group is all 0)
//   q[t, c]      = e4m3(x[t, c] / scales[t, c / 128])      (saturating, nearest even)
// so that x ≈ q · scale. The scale is rounded to f32 before q is computed from it, as a kernel
// that stores the scale and divides by the stored value does. An all-zero group gets scale 1,
// not 0 (0 would make 0/0 = NaN) and not a tiny epsilon (its q is 0 either way, and 1 keeps a
// consumer's q·scale exact).
#include <algorithm>
#include <cmath>

#include "kiln/zoo/parallel_for.h"
#include "kiln/zoo/references.h"
#include "tensor_args.h"

namespace kiln::zoo {

int reference_quant_fp8_group128(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*,
                                 int n_scalars) {
  if (tensors == nullptr || n_tensors != 3 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& x = tensors[0];
  const kiln_tensor& q = tensors[1];
  const kiln_tensor& scales = tensors[2];
  if (!detail::is_tensor(x, KILN_BF16, 2) || !detail::is_tensor(q, KILN_E4M3, 2) ||
      !detail::is_tensor(scales, KILN_F32, 2)) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t T = x.shape[0], H = x.shape[1];
  if (H % 128 != 0 || !detail::has_shape(q, {T, H}) || !detail::has_shape(scales, {T, H / 128})) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  return detail::guarded([&] {
    parallel_for(T, 16, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        for (int64_t g = 0; g < H / 128; ++g) {
          double amax = 0;
          for (int64_t c = 128 * g; c < 128 * (g + 1); ++c)
            amax = std::max(amax, std::fabs(detail::load(x, detail::offset(x, t, c))));
          const float scale = amax > 0 ? static_cast<float>(amax / 448.0) : 1.0f;
          detail::store(scales, detail::offset(scales, t, g), scale);
          for (int64_t c = 128 * g; c < 128 * (g + 1); ++c) {
            detail::store(q, detail::offset(q, t, c),
                          detail::load(x, detail::offset(x, t, c)) / scale);
          }
        }
      }
    });
  });
}

}  // namespace kiln::zoo
