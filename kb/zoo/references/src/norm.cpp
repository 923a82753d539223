// rmsnorm and layernorm over the last dim of x[T, H] (bf16), statistics in double.
//   rmsnorm:   y = x / sqrt(mean(x²) + eps) · w
//   layernorm: y = (x - mean) / sqrt(var + eps) · gamma + beta, var the biased variance
#include <cmath>
#include <vector>

#include "kiln/zoo/parallel_for.h"
#include "kiln/zoo/references.h"
#include "tensor_args.h"

namespace kiln::zoo {
namespace {

bool is_row_vector(const kiln_tensor& t, int64_t H) {
  return detail::is_tensor(t, KILN_BF16, 1) && t.shape[0] == H;
}

// Loads row r of x into `row`.
void load_row(const kiln_tensor& x, int64_t r, std::vector<double>& row) {
  for (size_t c = 0; c < row.size(); ++c) {
    row[c] = detail::load(x, detail::offset(x, r, static_cast<int64_t>(c)));
  }
}

}  // namespace

int reference_rmsnorm(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                      int n_scalars) {
  if (tensors == nullptr || n_tensors != 3) return KILN_ERR_BAD_ARGUMENT;
  const kiln_scalar* eps = detail::scalar_at(scalars, n_scalars, 1, 0, "eps", KILN_F64);
  const kiln_tensor& x = tensors[0];
  const kiln_tensor& w = tensors[1];
  const kiln_tensor& y = tensors[2];
  if (eps == nullptr || !detail::is_tensor(x, KILN_BF16, 2) || !is_row_vector(w, x.shape[1]) ||
      !detail::is_tensor(y, KILN_BF16, 2) || !detail::has_shape(y, {x.shape[0], x.shape[1]})) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t T = x.shape[0], H = x.shape[1];
  const double epsilon = eps->value.f;
  return detail::guarded([&] {
    parallel_for(T, 16, [&](int64_t begin, int64_t end) {
      std::vector<double> row(static_cast<size_t>(H));
      for (int64_t t = begin; t < end; ++t) {
        load_row(x, t, row);
        double squares = 0;
        for (const double v : row) squares += v * v;
        const double inverse_rms = 1.0 / std::sqrt(squares / static_cast<double>(H) + epsilon);
        for (int64_t c = 0; c < H; ++c) {
          const double weight = detail::load(w, detail::offset(w, c));
          detail::store(y, detail::offset(y, t, c),
                        row[static_cast<size_t>(c)] * inverse_rms * weight);
        }
      }
    });
  });
}

int reference_layernorm(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                        int n_scalars) {
  if (tensors == nullptr || n_tensors != 4) return KILN_ERR_BAD_ARGUMENT;
  const kiln_scalar* eps = detail::scalar_at(scalars, n_scalars, 1, 0, "eps", KILN_F64);
  const kiln_tensor& x = tensors[0];
  const kiln_tensor& gamma = tensors[1];
  const kiln_tensor& beta = tensors[2];
  const kiln_tensor& y = tensors[3];
  if (eps == nullptr || !detail::is_tensor(x, KILN_BF16, 2) || !is_row_vector(gamma, x.shape[1]) ||
      !is_row_vector(beta, x.shape[1]) || !detail::is_tensor(y, KILN_BF16, 2) ||
      !detail::has_shape(y, {x.shape[0], x.shape[1]})) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t T = x.shape[0], H = x.shape[1];
  const double epsilon = eps->value.f;
  return detail::guarded([&] {
    parallel_for(T, 16, [&](int64_t begin, int64_t end) {
      std::vector<double> row(static_cast<size_t>(H));
      for (int64_t t = begin; t < end; ++t) {
        load_row(x, t, row);
        double sum = 0;
        for (const double v : row) sum += v;
        const double mean = sum / static_cast<double>(H);
        double squares = 0;
        for (const double v : row) squares += (v - mean) * (v - mean);
        const double inverse_std = 1.0 / std::sqrt(squares / static_cast<double>(H) + epsilon);
        for (int64_t c = 0; c < H; ++c) {
          const double g = detail::load(gamma, detail::offset(gamma, c));
          const double b = detail::load(beta, detail::offset(beta, c));
          detail::store(y, detail::offset(y, t, c),
                        (row[static_cast<size_t>(c)] - mean) * inverse_std * g + b);
        }
      }
    });
  });
}

}  // namespace kiln::zoo
