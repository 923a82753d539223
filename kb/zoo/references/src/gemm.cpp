// gemm_tn, gemm_tn_fp8, gemm_tn_fp8_blockscaled, gemm_tn_int8, grouped_gemm_tn and
// grouped_gemm_masked: C = A·Bᵀ per row of C.
//
// Operands are widened exactly to float (every f16, bf16, E4M3 and int8 value is a float), each
// product is formed in double (exact: at most 2x11 significant bits, no overflow or
// underflow), and the products of one output are summed in double in ascending k. So the
// result is the exact dot product rounded twice at most (once in the double sum, once to
// the output dtype), independent of threads and tiling.
#include <algorithm>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "kiln/zoo/parallel_for.h"
#include "kiln/zoo/references.h"
#include "tensor_args.h"

namespace kiln::zoo {
namespace {

using detail::is_tensor;
using detail::load;
using detail::offset;

// A 2-D view into a tensor: element (i, k) is at base + i*row_stride + k*col_stride.
struct MatrixView {
  const kiln_tensor* tensor;
  int64_t base;
  int64_t row_stride;
  int64_t col_stride;
};

MatrixView matrix(const kiln_tensor& t) { return {&t, 0, t.strides[0], t.strides[1]}; }

// Output element (i, j) of a matrix view, written by the dot products.
int64_t element(const MatrixView& view, int64_t i, int64_t j) {
  return view.base + i * view.row_stride + j * view.col_stride;
}

// Rows `rows` of `view` (K columns each) as a dense row-major float matrix.
std::vector<float> widen_rows(const MatrixView& view, std::span<const int64_t> rows, int64_t K) {
  std::vector<float> out(rows.size() * static_cast<size_t>(K));
  parallel_for(static_cast<int64_t>(rows.size()), 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t row_base = view.base + rows[static_cast<size_t>(r)] * view.row_stride;
      float* dst = out.data() + r * K;
      for (int64_t k = 0; k < K; ++k) {
        dst[k] = static_cast<float>(load(*view.tensor, row_base + k * view.col_stride));
      }
    }
  });
  return out;
}

std::vector<float> widen_all(const MatrixView& view, int64_t rows, int64_t K) {
  return widen_rows(view, detail::all_rows(rows), K);
}

constexpr int64_t kMicro = 4;      // a 4x4 block of outputs shares each loaded value
constexpr int64_t kTileCols = 64;  // columns of B per task

// Calls store(r, j, sum) with sum = Σ_k a[r,k]·b[j,k] for every r < R, j < N, where a is
// dense [R, K] and b dense [N, K].
template <typename Store>
void dot_products(const std::vector<float>& a, int64_t R, const std::vector<float>& b, int64_t N,
                  int64_t K, const Store& store) {
  const int64_t row_tiles = (R + kMicro - 1) / kMicro;
  const int64_t col_tiles = (N + kTileCols - 1) / kTileCols;
  parallel_for(row_tiles * col_tiles, 1, [&](int64_t begin, int64_t end) {
    for (int64_t tile = begin; tile < end; ++tile) {
      const int64_t i0 = (tile / col_tiles) * kMicro;
      const int64_t j_begin = (tile % col_tiles) * kTileCols;
      const int64_t j_end = std::min(N, j_begin + kTileCols);
      for (int64_t j0 = j_begin; j0 < j_end; j0 += kMicro) {
        // Rows and columns past the edge repeat the last one; their sums are not stored.
        const float* ar[kMicro];
        const float* br[kMicro];
        for (int64_t u = 0; u < kMicro; ++u) {
          ar[u] = a.data() + std::min(i0 + u, R - 1) * K;
          br[u] = b.data() + std::min(j0 + u, N - 1) * K;
        }
        double s[kMicro][kMicro] = {};
        for (int64_t k = 0; k < K; ++k) {
          double av[kMicro];
          double bv[kMicro];
          for (int64_t u = 0; u < kMicro; ++u) {
            av[u] = ar[u][k];
            bv[u] = br[u][k];
          }
          for (int64_t u = 0; u < kMicro; ++u) {
            for (int64_t v = 0; v < kMicro; ++v) s[u][v] += av[u] * bv[v];
          }
        }
        for (int64_t u = 0; u < kMicro && i0 + u < R; ++u) {
          for (int64_t v = 0; v < kMicro && j0 + v < j_end; ++v) store(i0 + u, j0 + v, s[u][v]);
        }
      }
    }
  });
}

bool is_half_type(kiln_dtype dtype) { return dtype == KILN_F16 || dtype == KILN_BF16; }

// A[M,K], B[N,K], C[M,N] with the given dtypes.
bool check_tn(const kiln_tensor& a, const kiln_tensor& b, const kiln_tensor& c, kiln_dtype in,
              kiln_dtype out) {
  return is_tensor(a, in, 2) && is_tensor(b, in, 2) && is_tensor(c, out, 2) &&
         b.shape[1] == a.shape[1] && c.shape[0] == a.shape[0] && c.shape[1] == b.shape[0];
}

bool check_gemm_tn(const kiln_tensor* t, int n_tensors, int n_scalars) {
  return t != nullptr && n_tensors == 3 && n_scalars == 0 && is_half_type(t[0].dtype) &&
         check_tn(t[0], t[1], t[2], t[0].dtype, t[0].dtype);
}

bool check_gemm_tn_fp8(const kiln_tensor* t, int n_tensors, int n_scalars) {
  return t != nullptr && n_tensors == 5 && n_scalars == 0 &&
         check_tn(t[0], t[1], t[4], KILN_E4M3, KILN_BF16) && is_tensor(t[2], KILN_F32, 1) &&
         detail::has_shape(t[2], {1}) && is_tensor(t[3], KILN_F32, 1) &&
         detail::has_shape(t[3], {1});
}

constexpr int64_t kScaleBlock = 128;  // gemm_tn_fp8_blockscaled: 1x128 (A) and 128x128 (B)

int64_t scale_blocks(int64_t extent) { return (extent + kScaleBlock - 1) / kScaleBlock; }

bool check_gemm_tn_fp8_blockscaled(const kiln_tensor* t, int n_tensors, int n_scalars) {
  if (t == nullptr || n_tensors != 5 || n_scalars != 0 ||
      !check_tn(t[0], t[1], t[4], KILN_E4M3, KILN_BF16)) {
    return false;
  }
  const int64_t M = t[0].shape[0], K = t[0].shape[1], N = t[1].shape[0];
  return is_tensor(t[2], KILN_F32, 2) && detail::has_shape(t[2], {M, scale_blocks(K)}) &&
         is_tensor(t[3], KILN_F32, 2) &&
         detail::has_shape(t[3], {scale_blocks(N), scale_blocks(K)});
}

bool check_grouped(const kiln_tensor* t, int n_tensors, int n_scalars) {
  if (t == nullptr || n_tensors != 4 || n_scalars != 0) return false;
  const kiln_tensor& a = t[0];
  const kiln_tensor& b = t[1];
  const kiln_tensor& offsets = t[2];
  const kiln_tensor& c = t[3];
  const kiln_dtype dtype = a.dtype;
  if (!is_half_type(dtype) || !is_tensor(a, dtype, 2) || !is_tensor(b, dtype, 3) ||
      !is_tensor(offsets, KILN_I32, 1) || !is_tensor(c, dtype, 2)) {
    return false;
  }
  const int64_t M = a.shape[0], K = a.shape[1], G = b.shape[0], N = b.shape[1];
  if (b.shape[2] != K || offsets.shape[0] != G + 1 || c.shape[0] != M || c.shape[1] != N) {
    return false;
  }
  // offsets[0] = 0, offsets[G] = M, non-decreasing.
  int64_t previous = 0;
  for (int64_t g = 0; g <= G; ++g) {
    const auto start = static_cast<int64_t>(load(offsets, offset(offsets, g)));
    if ((g == 0 && start != 0) || start < previous || start > M) return false;
    previous = start;
  }
  return previous == M;
}

// C rows `rows` = scale · A[rows]·Bᵀ, C a matrix view; int32 outputs wrap modulo 2^32 (the
// sum itself is exact: below 2^53).
void gemm_rows(const MatrixView& a, const MatrixView& b, const MatrixView& c, int64_t N, int64_t K,
               std::span<const int64_t> rows, double scale) {
  if (rows.empty() || N == 0) return;
  const std::vector<float> a_rows = widen_rows(a, rows, K);
  const std::vector<float> b_all = widen_all(b, N, K);
  const bool wrap_int32 = c.tensor->dtype == KILN_I32;
  dot_products(a_rows, static_cast<int64_t>(rows.size()), b_all, N, K,
               [&](int64_t r, int64_t j, double sum) {
                 double value = sum * scale;
                 if (wrap_int32) {
                   const auto bits = static_cast<uint32_t>(static_cast<int64_t>(value));
                   value = static_cast<int32_t>(bits);
                 }
                 detail::store(*c.tensor, element(c, rows[static_cast<size_t>(r)], j), value);
               });
}

bool check_gemm_tn_int8(const kiln_tensor* t, int n_tensors, int n_scalars) {
  return t != nullptr && n_tensors == 3 && n_scalars == 0 &&
         check_tn(t[0], t[1], t[2], KILN_I8, KILN_I32);
}

// A[G,M,K], B[G,N,K], masked_m[G] with every count in [0, M], C[G,M,N].
bool check_masked(const kiln_tensor* t, int n_tensors, int n_scalars) {
  if (t == nullptr || n_tensors != 4 || n_scalars != 0) return false;
  const kiln_tensor& a = t[0];
  const kiln_tensor& b = t[1];
  const kiln_tensor& masked_m = t[2];
  const kiln_tensor& c = t[3];
  const kiln_dtype dtype = a.dtype;
  if (!is_half_type(dtype) || !is_tensor(a, dtype, 3) || !is_tensor(b, dtype, 3) ||
      !is_tensor(masked_m, KILN_I32, 1) || !is_tensor(c, dtype, 3)) {
    return false;
  }
  const int64_t G = a.shape[0], M = a.shape[1], K = a.shape[2], N = b.shape[1];
  if (!detail::has_shape(b, {G, N, K}) || !detail::has_shape(masked_m, {G}) ||
      !detail::has_shape(c, {G, M, N})) {
    return false;
  }
  for (int64_t g = 0; g < G; ++g) {
    const double count = load(masked_m, offset(masked_m, g));
    if (count < 0 || count > static_cast<double>(M)) return false;
  }
  return true;
}

}  // namespace

int reference_gemm_tn_rows(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*,
                           int n_scalars, std::span<const int64_t> rows) {
  if (!check_gemm_tn(tensors, n_tensors, n_scalars)) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& c = tensors[2];
  if (!detail::valid_rows(rows, c.shape[0])) return KILN_ERR_BAD_ARGUMENT;
  return detail::guarded([&] {
    gemm_rows(matrix(tensors[0]), matrix(tensors[1]), matrix(c), c.shape[1], tensors[0].shape[1],
              rows, 1.0);
  });
}

int reference_gemm_tn(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                      int n_scalars) {
  if (!check_gemm_tn(tensors, n_tensors, n_scalars)) return KILN_ERR_BAD_ARGUMENT;
  const auto rows = detail::all_rows(tensors[2].shape[0]);
  return reference_gemm_tn_rows(tensors, n_tensors, scalars, n_scalars, rows);
}

int reference_gemm_tn_fp8_rows(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*,
                               int n_scalars, std::span<const int64_t> rows) {
  if (!check_gemm_tn_fp8(tensors, n_tensors, n_scalars)) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& c = tensors[4];
  if (!detail::valid_rows(rows, c.shape[0])) return KILN_ERR_BAD_ARGUMENT;
  const double scale = load(tensors[2], 0) * load(tensors[3], 0);  // exact: two floats
  return detail::guarded([&] {
    gemm_rows(matrix(tensors[0]), matrix(tensors[1]), matrix(c), c.shape[1], tensors[0].shape[1],
              rows, scale);
  });
}

int reference_gemm_tn_fp8(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                          int n_scalars) {
  if (!check_gemm_tn_fp8(tensors, n_tensors, n_scalars)) return KILN_ERR_BAD_ARGUMENT;
  const auto rows = detail::all_rows(tensors[4].shape[0]);
  return reference_gemm_tn_fp8_rows(tensors, n_tensors, scalars, n_scalars, rows);
}

// Block by block of 128 k: the exact block sums (as in gemm_rows), each times its two scales,
// added in double in ascending block order.
int reference_gemm_tn_fp8_blockscaled_rows(const kiln_tensor* tensors, int n_tensors,
                                           const kiln_scalar*, int n_scalars,
                                           std::span<const int64_t> rows) {
  if (!check_gemm_tn_fp8_blockscaled(tensors, n_tensors, n_scalars)) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& a = tensors[0];
  const kiln_tensor& b = tensors[1];
  const kiln_tensor& scale_a = tensors[2];
  const kiln_tensor& scale_b = tensors[3];
  const kiln_tensor& c = tensors[4];
  if (!detail::valid_rows(rows, c.shape[0])) return KILN_ERR_BAD_ARGUMENT;
  const int64_t N = c.shape[1], K = a.shape[1];
  return detail::guarded([&] {
    if (rows.empty() || N == 0) return;
    std::vector<double> sums(rows.size() * static_cast<size_t>(N), 0.0);
    for (int64_t kb = 0; kb < scale_blocks(K); ++kb) {
      const int64_t k0 = kb * kScaleBlock;
      const int64_t width = std::min(kScaleBlock, K - k0);
      const MatrixView a_block{&a, k0 * a.strides[1], a.strides[0], a.strides[1]};
      const MatrixView b_block{&b, k0 * b.strides[1], b.strides[0], b.strides[1]};
      const std::vector<float> a_rows = widen_rows(a_block, rows, width);
      const std::vector<float> b_all = widen_all(b_block, N, width);
      dot_products(a_rows, static_cast<int64_t>(rows.size()), b_all, N, width,
                   [&](int64_t r, int64_t j, double sum) {
                     const double sa =
                         load(scale_a, offset(scale_a, rows[static_cast<size_t>(r)], kb));
                     const double sb = load(scale_b, offset(scale_b, j / kScaleBlock, kb));
                     sums[static_cast<size_t>(r * N + j)] += sum * sa * sb;
                   });
    }
    for (size_t r = 0; r < rows.size(); ++r) {
      for (int64_t j = 0; j < N; ++j) {
        detail::store(c, offset(c, rows[r], j), sums[r * static_cast<size_t>(N) + j]);
      }
    }
  });
}

int reference_gemm_tn_fp8_blockscaled(const kiln_tensor* tensors, int n_tensors,
                                      const kiln_scalar* scalars, int n_scalars) {
  if (!check_gemm_tn_fp8_blockscaled(tensors, n_tensors, n_scalars)) return KILN_ERR_BAD_ARGUMENT;
  const auto rows = detail::all_rows(tensors[4].shape[0]);
  return reference_gemm_tn_fp8_blockscaled_rows(tensors, n_tensors, scalars, n_scalars, rows);
}

int reference_grouped_gemm_tn_rows(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*,
                                   int n_scalars, std::span<const int64_t> rows) {
  if (!check_grouped(tensors, n_tensors, n_scalars)) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& a = tensors[0];
  const kiln_tensor& b = tensors[1];
  const kiln_tensor& offsets = tensors[2];
  const kiln_tensor& c = tensors[3];
  if (!detail::valid_rows(rows, c.shape[0])) return KILN_ERR_BAD_ARGUMENT;
  const int64_t G = b.shape[0], N = b.shape[1], K = b.shape[2];
  return detail::guarded([&] {
    // The group of each row: the g with offsets[g] <= row < offsets[g+1].
    std::vector<int64_t> starts(static_cast<size_t>(G + 1));
    for (int64_t g = 0; g <= G; ++g) {
      starts[static_cast<size_t>(g)] = static_cast<int64_t>(load(offsets, offset(offsets, g)));
    }
    std::map<int64_t, std::vector<int64_t>> rows_of_group;
    for (const int64_t row : rows) {
      const auto after = std::upper_bound(starts.begin(), starts.end(), row);
      rows_of_group[(after - starts.begin()) - 1].push_back(row);
    }
    for (const auto& [g, group_rows] : rows_of_group) {
      const MatrixView b_group{&b, g * b.strides[0], b.strides[1], b.strides[2]};
      gemm_rows(matrix(a), b_group, matrix(c), N, K, group_rows, 1.0);
    }
  });
}

int reference_grouped_gemm_tn(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                              int n_scalars) {
  if (!check_grouped(tensors, n_tensors, n_scalars)) return KILN_ERR_BAD_ARGUMENT;
  const auto rows = detail::all_rows(tensors[3].shape[0]);
  return reference_grouped_gemm_tn_rows(tensors, n_tensors, scalars, n_scalars, rows);
}

int reference_gemm_tn_int8_rows(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*,
                                int n_scalars, std::span<const int64_t> rows) {
  if (!check_gemm_tn_int8(tensors, n_tensors, n_scalars)) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& c = tensors[2];
  if (!detail::valid_rows(rows, c.shape[0])) return KILN_ERR_BAD_ARGUMENT;
  return detail::guarded([&] {
    gemm_rows(matrix(tensors[0]), matrix(tensors[1]), matrix(c), c.shape[1], tensors[0].shape[1],
              rows, 1.0);
  });
}

int reference_gemm_tn_int8(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars) {
  if (!check_gemm_tn_int8(tensors, n_tensors, n_scalars)) return KILN_ERR_BAD_ARGUMENT;
  const auto rows = detail::all_rows(tensors[2].shape[0]);
  return reference_gemm_tn_int8_rows(tensors, n_tensors, scalars, n_scalars, rows);
}

// Row g*M + r of C: A[g, r]·B[g]ᵀ when r < masked_m[g], zeros otherwise.
int reference_grouped_gemm_masked_rows(const kiln_tensor* tensors, int n_tensors,
                                       const kiln_scalar*, int n_scalars,
                                       std::span<const int64_t> rows) {
  if (!check_masked(tensors, n_tensors, n_scalars)) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& a = tensors[0];
  const kiln_tensor& b = tensors[1];
  const kiln_tensor& masked_m = tensors[2];
  const kiln_tensor& c = tensors[3];
  const int64_t G = a.shape[0], M = a.shape[1], K = a.shape[2], N = b.shape[1];
  if (!detail::valid_rows(rows, G * M)) return KILN_ERR_BAD_ARGUMENT;
  return detail::guarded([&] {
    std::map<int64_t, std::vector<int64_t>> valid_rows_of_group;
    for (const int64_t row : rows) {
      const int64_t g = row / M, r = row % M;
      if (r < static_cast<int64_t>(load(masked_m, offset(masked_m, g)))) {
        valid_rows_of_group[g].push_back(r);
      } else {
        for (int64_t j = 0; j < N; ++j) detail::store(c, offset(c, g, r, j), 0.0);
      }
    }
    for (const auto& [g, group_rows] : valid_rows_of_group) {
      const MatrixView a_group{&a, g * a.strides[0], a.strides[1], a.strides[2]};
      const MatrixView b_group{&b, g * b.strides[0], b.strides[1], b.strides[2]};
      const MatrixView c_group{&c, g * c.strides[0], c.strides[1], c.strides[2]};
      gemm_rows(a_group, b_group, c_group, N, K, group_rows, 1.0);
    }
  });
}

int reference_grouped_gemm_masked(const kiln_tensor* tensors, int n_tensors,
                                  const kiln_scalar* scalars, int n_scalars) {
  if (!check_masked(tensors, n_tensors, n_scalars)) return KILN_ERR_BAD_ARGUMENT;
  const auto rows = detail::all_rows(tensors[3].shape[0] * tensors[3].shape[1]);
  return reference_grouped_gemm_masked_rows(tensors, n_tensors, scalars, n_scalars, rows);
}

}  // namespace kiln::zoo
