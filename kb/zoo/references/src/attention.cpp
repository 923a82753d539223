// attention_fwd: O = softmax(Q·Kᵀ·scale, causal mask)·V per (batch, head), Q, K, V, O of
// shape [B, H, S, D] in f16 or bf16. Scores, softmax and the weighted sum are in double
// (products of widened inputs are exact); each O element is rounded once. With causal = 1
// query s sees keys 0..s.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "kiln/zoo/parallel_for.h"
#include "kiln/zoo/references.h"
#include "tensor_args.h"

namespace kiln::zoo {
namespace {

bool same_shape(const kiln_tensor& a, const kiln_tensor& b) {
  return detail::has_shape(b, {a.shape[0], a.shape[1], a.shape[2], a.shape[3]});
}

struct Arguments {
  bool causal;
  double scale;
};

// Checks tensors and scalars; fills `args` when they are valid.
bool check(const kiln_tensor* t, int n_tensors, const kiln_scalar* scalars, int n_scalars,
           Arguments& args) {
  if (t == nullptr || n_tensors != 4) return false;
  const kiln_scalar* causal = detail::scalar_at(scalars, n_scalars, 2, 0, "causal", KILN_I64);
  const kiln_scalar* scale = detail::scalar_at(scalars, n_scalars, 2, 1, "scale", KILN_F64);
  if (causal == nullptr || scale == nullptr || (causal->value.i != 0 && causal->value.i != 1)) {
    return false;
  }
  const kiln_dtype dtype = t[0].dtype;
  if (dtype != KILN_F16 && dtype != KILN_BF16) return false;
  for (int i = 0; i < 4; ++i) {
    if (!detail::is_tensor(t[i], dtype, 4) || !same_shape(t[0], t[i])) return false;
  }
  args = {causal->value.i == 1, scale->value.f};
  return true;
}

// Rows s of one head's [S, D] matrix as dense float.
std::vector<float> widen_head(const kiln_tensor& t, int64_t b, int64_t h, int64_t S, int64_t D) {
  std::vector<float> out(static_cast<size_t>(S * D));
  for (int64_t s = 0; s < S; ++s) {
    for (int64_t d = 0; d < D; ++d) {
      out[static_cast<size_t>(s * D + d)] =
          static_cast<float>(detail::load(t, detail::offset(t, b, h, s, d)));
    }
  }
  return out;
}

// O[b, h, s, :] for one query row s, given that head's K and V.
void attend(const kiln_tensor& q, const kiln_tensor& o, int64_t b, int64_t h, int64_t s,
            const std::vector<float>& keys, const std::vector<float>& values, int64_t S, int64_t D,
            const Arguments& args, std::vector<double>& scores, std::vector<double>& query) {
  for (int64_t d = 0; d < D; ++d) {
    query[static_cast<size_t>(d)] = detail::load(q, detail::offset(q, b, h, s, d));
  }
  const int64_t visible = args.causal ? s + 1 : S;
  double max = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < visible; ++j) {
    const float* k = keys.data() + j * D;
    double dot = 0;
    for (int64_t d = 0; d < D; ++d)
      dot += query[static_cast<size_t>(d)] * static_cast<double>(k[d]);
    scores[static_cast<size_t>(j)] = dot * args.scale;
    max = std::max(max, scores[static_cast<size_t>(j)]);
  }
  double sum = 0;
  for (int64_t j = 0; j < visible; ++j) {
    auto& p = scores[static_cast<size_t>(j)];
    p = std::exp(p - max);
    sum += p;
  }
  for (int64_t d = 0; d < D; ++d) query[static_cast<size_t>(d)] = 0;  // reused as the output row
  for (int64_t j = 0; j < visible; ++j) {
    const double p = scores[static_cast<size_t>(j)];
    const float* v = values.data() + j * D;
    for (int64_t d = 0; d < D; ++d) query[static_cast<size_t>(d)] += p * static_cast<double>(v[d]);
  }
  for (int64_t d = 0; d < D; ++d) {
    detail::store(o, detail::offset(o, b, h, s, d), query[static_cast<size_t>(d)] / sum);
  }
}

}  // namespace

int reference_attention_fwd_rows(const kiln_tensor* tensors, int n_tensors,
                                 const kiln_scalar* scalars, int n_scalars,
                                 std::span<const int64_t> rows) {
  Arguments args{};
  if (!check(tensors, n_tensors, scalars, n_scalars, args)) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& q = tensors[0];
  const kiln_tensor& k = tensors[1];
  const kiln_tensor& v = tensors[2];
  const kiln_tensor& o = tensors[3];
  const int64_t B = q.shape[0], H = q.shape[1], S = q.shape[2], D = q.shape[3];
  if (!detail::valid_rows(rows, B * H * S)) return KILN_ERR_BAD_ARGUMENT;
  if (D == 0) return KILN_OK;
  return detail::guarded([&] {
    std::map<int64_t, std::vector<int64_t>> rows_of_head;  // head b*H+h -> query positions
    for (const int64_t row : rows) rows_of_head[row / S].push_back(row % S);
    for (const auto& [head, positions] : rows_of_head) {
      const int64_t b = head / H, h = head % H;
      const std::vector<float> keys = widen_head(k, b, h, S, D);
      const std::vector<float> values = widen_head(v, b, h, S, D);
      parallel_for(static_cast<int64_t>(positions.size()), 4, [&](int64_t begin, int64_t end) {
        std::vector<double> scores(static_cast<size_t>(S));
        std::vector<double> query(static_cast<size_t>(D));
        for (int64_t i = begin; i < end; ++i) {
          attend(q, o, b, h, positions[static_cast<size_t>(i)], keys, values, S, D, args, scores,
                 query);
        }
      });
    }
  });
}

int reference_attention_fwd(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                            int n_scalars) {
  Arguments args{};
  if (!check(tensors, n_tensors, scalars, n_scalars, args)) return KILN_ERR_BAD_ARGUMENT;
  const auto rows =
      detail::all_rows(tensors[0].shape[0] * tensors[0].shape[1] * tensors[0].shape[2]);
  return reference_attention_fwd_rows(tensors, n_tensors, scalars, n_scalars, rows);
}

}  // namespace kiln::zoo
