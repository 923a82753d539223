// topk: the K largest values of each row of x[R, C], in descending order, with their
// column indices; equal values go in order of lower index first. NaN counts as larger
// than every number (as torch.topk does), so a NaN in the input is always selected.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "kiln/zoo/parallel_for.h"
#include "kiln/zoo/references.h"
#include "tensor_args.h"

namespace kiln::zoo {
namespace {

struct Candidate {
  double value;
  int64_t index;
};

// True when `a` comes before `b` in the output.
bool ranks_before(const Candidate& a, const Candidate& b) {
  const bool a_nan = std::isnan(a.value), b_nan = std::isnan(b.value);
  if (a_nan != b_nan) return a_nan;
  if (!a_nan && a.value != b.value) return a.value > b.value;
  return a.index < b.index;
}

}  // namespace

int reference_topk(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int n_scalars) {
  if (tensors == nullptr || n_tensors != 3 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& x = tensors[0];
  const kiln_tensor& values = tensors[1];
  const kiln_tensor& indices = tensors[2];
  if (!detail::is_tensor(x, KILN_F32, 2) || !detail::is_tensor(values, KILN_F32, 2) ||
      !detail::is_tensor(indices, KILN_I32, 2) || values.shape[0] != x.shape[0] ||
      values.shape[1] > x.shape[1] ||
      !detail::has_shape(indices, {values.shape[0], values.shape[1]})) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t R = x.shape[0], C = x.shape[1], K = values.shape[1];
  return detail::guarded([&] {
    parallel_for(R, 16, [&](int64_t begin, int64_t end) {
      std::vector<Candidate> row(static_cast<size_t>(C));
      for (int64_t r = begin; r < end; ++r) {
        for (int64_t c = 0; c < C; ++c) {
          row[static_cast<size_t>(c)] = {detail::load(x, detail::offset(x, r, c)), c};
        }
        std::partial_sort(row.begin(), row.begin() + K, row.end(), ranks_before);
        for (int64_t k = 0; k < K; ++k) {
          const Candidate& chosen = row[static_cast<size_t>(k)];
          detail::store(values, detail::offset(values, r, k), chosen.value);
          detail::store(indices, detail::offset(indices, r, k), static_cast<double>(chosen.index));
        }
      }
    });
  });
}

}  // namespace kiln::zoo
