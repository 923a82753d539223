// grouped_gemm_fp8 baseline: cuBLASLt's block-scaled FP8 matmul, one call per group, as a
// vendor library does a grouped GEMM.
//
// D_g[rows_g, N] = dequant(A_g) * dequant(B_g)^T in row-major terms. cuBLASLt is column-major,
// so each group is the "TN" GEMM D_g^T (N x rows_g, ld N) = op(B_g) * A_g^T with
//   cuBLASLt A = B_g  (K x N column-major, ld K, transposed),  scales 128 x 128 blocks
//                      (CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F), from SB[g];
//   cuBLASLt B = A_g  (K x rows_g column-major, ld K),         scales per row per 128 channels
//                      (CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F), from SA's rows of group g;
// e4m3 in, bf16 out, fp32 compute. The group lengths come from the dims on the host
// (kiln/group_layout.h, the harness's own generator, scalars layout_seed and rows_per_group),
// so nothing is read back from the device. Padding rows (I = -1) are left unwritten.
//
// Fallback: when cuBLASLt has no algorithm for BLK128x128 scales on its A (asked once per
// device, on the first non-empty group), both operands use VEC128_32F, B's block scales expanded
// to one per row of B (exact: the 128 rows of a block share its scale). When it has neither, the
// call returns KILN_ERR_UNSUPPORTED.
//
// Scale layouts, as measured on an H200 with cuBLASLt 13.1 (README.md): VEC128 scales (the
// task's SA, cuBLASLt's B) are read rows fastest, [K/128][rows], so the baseline transposes SA
// per group into a scratch buffer (one small kernel per call, in the baseline's time);
// BLK128x128 scales (SB) are read k-blocks fastest as the task stores them, [N/128][ld] with ld
// a multiple of 4 (true of every scored workload, K/128 = 56, 32, 24, 16; other K are repacked).
// cuBLASLt also refuses VEC128 scales on an operand whose row count is not a multiple of 4, so
// each group's GEMM runs over its rows rounded up to a multiple of 4: the extra rows are the
// group's padding (I = -1), which lies inside the group's 128-row region and is outside the
// contract. KILN_GG_SA_AS_GIVEN=1 / KILN_GG_SB_AS_GIVEN=0 change the two layouts for probing.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "kiln/abi.h"
#include "kiln/group_layout.h"

#ifndef KILN_GG_SA_AS_GIVEN
#define KILN_GG_SA_AS_GIVEN 0
#endif
#ifndef KILN_GG_SB_AS_GIVEN
#define KILN_GG_SB_AS_GIVEN 1
#endif

namespace {

constexpr int64_t kBlock = 128;
constexpr int64_t kAlign = 128;     // task.json: input_distribution.I.align
constexpr double kSpread = 0.25;    // task.json: input_distribution.I.spread
constexpr size_t kWorkspace = size_t{32} << 20;

// SA [rows, blocks] -> [blocks, rows]; SB [G][nb][blocks] -> [G][blocks][nb].
__global__ void transpose_scales(const float* in, float* out, int64_t batches, int64_t outer,
                                 int64_t inner) {
  const int64_t total = batches * outer * inner;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t b = i / (outer * inner);
    const int64_t o = (i / inner) % outer;
    const int64_t k = i % inner;
    out[(b * inner + k) * outer + o] = in[i];
  }
}

// SB [G][nb][blocks] -> one scale per row of B: [G][N][blocks], or [G][blocks][N] rows fastest.
__global__ void expand_block_scales(const float* in, float* out, int64_t groups, int64_t N,
                                    int64_t blocks, bool rows_fastest) {
  const int64_t total = groups * N * blocks;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t g = i / (N * blocks);
    const int64_t n = (i / blocks) % N;
    const int64_t k = i % blocks;
    const float v = in[(g * (N / 128) + n / 128) * blocks + k];
    out[rows_fastest ? (g * blocks + k) * N + n : i] = v;
  }
}

// [rows][inner] -> [rows][ld], ld >= inner (the gap left as it is: never read as a scale).
__global__ void pad_scale_rows(const float* in, float* out, int64_t rows, int64_t inner,
                               int64_t ld) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < rows * inner;
       i += int64_t{gridDim.x} * blockDim.x)
    out[(i / inner) * ld + i % inner] = in[i];
}

// The rows a group's GEMM covers: its valid rows rounded up to a multiple of 4 (cuBLASLt's
// VEC128 scales need it); the extra rows are the group's own padding, inside its 128-row region.
int64_t gemm_rows(int64_t rows) { return (rows + 3) / 4 * 4; }

struct DeviceState {
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
  float* scales = nullptr;  // transposed SA then SB
  size_t scale_floats = 0;
  // (N, K, rows) -> heuristic algorithm
  std::map<std::tuple<int64_t, int64_t, int64_t, int>, cublasLtMatmulAlgo_t> algos;
  // The scale modes cuBLASLt accepts here: 0 not asked yet; 1 BLK128x128 for B's scales (the
  // task's layout); 2 VEC128 for both, B's block scales expanded to one per row; -1 neither.
  int pair = 0;
};

struct Cache {
  std::mutex mutex;
  DeviceState devices[64];
};

Cache& cache() {
  static Cache c;  // never destroyed before exit
  return c;
}

bool dense(const kiln_tensor& t, kiln_dtype dtype, int rank) {
  if (t.dtype != dtype || t.rank != rank) return false;
  int64_t stride = 1;
  for (int d = rank; d-- > 0;) {
    if (t.shape[d] < 0) return false;
    if (t.shape[d] > 1 && t.strides[d] != stride) return false;
    stride *= t.shape[d];
  }
  return true;
}

bool scalar(const kiln_scalar* scalars, int n, const char* name, int64_t* value) {
  for (int i = 0; i < n; ++i) {
    const char* a = scalars[i].name;
    const char* b = name;
    while (*a != 0 && *a == *b) ++a, ++b;
    if (*a == 0 && *b == 0 && scalars[i].dtype == KILN_I64) {
      *value = scalars[i].value.i;
      return true;
    }
  }
  return false;
}

// One group's GEMM with `mode_a` for the scales of the task's B (cuBLASLt's A); false when
// cuBLASLt refuses it. With run == false only the heuristic is asked (and cached).
bool group_gemm(DeviceState& s, cublasLtMatmulMatrixScale_t mode_a, bool run, const void* a,
                const float* sa, const void* b, const float* sb, void* d, int64_t rows, int64_t N,
                int64_t K, cudaStream_t stream) {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  bool ok = cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS;
  const cublasOperation_t transa = CUBLAS_OP_T;
  const cublasOperation_t transb = CUBLAS_OP_N;
  const cublasLtMatmulMatrixScale_t mode_b = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
  auto set = [&](cublasLtMatmulDescAttributes_t attr, const void* value, size_t size) {
    ok = ok && cublasLtMatmulDescSetAttribute(op, attr, value, size) == CUBLAS_STATUS_SUCCESS;
  };
  set(CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa);
  set(CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb);
  set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode_a, sizeof mode_a);
  set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode_b, sizeof mode_b);
  set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sb, sizeof sb);
  set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sa, sizeof sa);
  ok = ok && cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, K, N, K) == CUBLAS_STATUS_SUCCESS;
  ok = ok && cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, K, rows, K) == CUBLAS_STATUS_SUCCESS;
  ok = ok && cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, N, rows, N) == CUBLAS_STATUS_SUCCESS;
  const auto key = std::make_tuple(N, K, rows, static_cast<int>(mode_a));
  auto found = s.algos.find(key);
  if (ok && found == s.algos.end()) {
    cublasLtMatmulPreference_t pref = nullptr;
    ok = cublasLtMatmulPreferenceCreate(&pref) == CUBLAS_STATUS_SUCCESS;
    ok = ok && cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &kWorkspace, sizeof kWorkspace) ==
                   CUBLAS_STATUS_SUCCESS;
    cublasLtMatmulHeuristicResult_t result = {};
    int returned = 0;
    ok = ok && cublasLtMatmulAlgoGetHeuristic(s.handle, op, la, lb, ld, ld, pref, 1, &result,
                                              &returned) == CUBLAS_STATUS_SUCCESS &&
         returned > 0;
    if (pref != nullptr) cublasLtMatmulPreferenceDestroy(pref);
    if (ok) found = s.algos.emplace(key, result.algo).first;
  }
  const float alpha = 1.0f;
  const float beta = 0.0f;
  ok = ok && (!run || cublasLtMatmul(s.handle, op, &alpha, b, la, a, lb, &beta, d, ld, d, ld,
                            &found->second, s.workspace, kWorkspace,
                            stream) == CUBLAS_STATUS_SUCCESS);
  if (ld != nullptr) cublasLtMatrixLayoutDestroy(ld);
  if (lb != nullptr) cublasLtMatrixLayoutDestroy(lb);
  if (la != nullptr) cublasLtMatrixLayoutDestroy(la);
  if (op != nullptr) cublasLtMatmulDescDestroy(op);
  return ok;
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  if (tensors == nullptr || n_tensors != 6) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& a = tensors[0];
  const kiln_tensor& sa = tensors[1];
  const kiln_tensor& b = tensors[2];
  const kiln_tensor& sb = tensors[3];
  const kiln_tensor& idx = tensors[4];
  const kiln_tensor& d = tensors[5];
  if (!dense(a, KILN_E4M3, 2) || !dense(sa, KILN_F32, 2) || !dense(b, KILN_E4M3, 3) ||
      !dense(sb, KILN_F32, 3) || !dense(idx, KILN_I32, 1) || !dense(d, KILN_BF16, 2))
    return KILN_ERR_BAD_ARGUMENT;
  int64_t seed = 0, per_group = 0;
  if (!scalar(scalars, n_scalars, "layout_seed", &seed) ||
      !scalar(scalars, n_scalars, "rows_per_group", &per_group))
    return KILN_ERR_BAD_ARGUMENT;
  const int64_t rows = a.shape[0];
  const int64_t K = a.shape[1];
  const int64_t G = b.shape[0];
  const int64_t N = b.shape[1];
  const int64_t blocks = K / kBlock;
  if (K % kBlock != 0 || N % kBlock != 0 || N > INT_MAX || K > INT_MAX)
    return KILN_ERR_UNSUPPORTED;
  if (b.shape[2] != K || d.shape[0] != rows || d.shape[1] != N || sa.shape[1] != blocks ||
      sb.shape[1] != N / kBlock || sb.shape[2] != blocks)
    return KILN_ERR_BAD_ARGUMENT;
  std::vector<int64_t> begin(static_cast<size_t>(G)), count(static_cast<size_t>(G));
  if (kiln_group_layout(G, per_group, kAlign, kSpread, static_cast<uint64_t>(seed), rows,
                        begin.data(), count.data()) != 0)
    return KILN_ERR_BAD_ARGUMENT;

  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= 64) return KILN_ERR_LAUNCH;
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  DeviceState& s = c.devices[device];
  if (s.handle == nullptr) {
    if (cublasLtCreate(&s.handle) != CUBLAS_STATUS_SUCCESS) return KILN_ERR_LAUNCH;
    if (cudaMalloc(&s.workspace, kWorkspace) != cudaSuccess) return KILN_ERR_LAUNCH;
  }
  const float* sa_ptr = static_cast<const float*>(sa.data);
  const float* sb_ptr = static_cast<const float*>(sb.data);
  const int64_t sa_floats = rows * blocks;
  // Room for B's scales expanded to one per row, or padded to a multiple of 4 per block row.
  const int64_t sb_floats = G * N * ((blocks + 3) / 4 * 4);
  int64_t first = 0;  // the first non-empty group
  while (first < G && count[static_cast<size_t>(first)] == 0) ++first;
  if (first == G) return KILN_OK;  // no rows in any group: nothing to write
  if (s.pair == 0) {
    const auto* a0 = static_cast<const uint8_t*>(a.data) + begin[first] * K;
    const auto* b0 = static_cast<const uint8_t*>(b.data) + first * N * K;
    const int64_t n0 = gemm_rows(count[static_cast<size_t>(first)]);
    if (group_gemm(s, CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F, false, a0, sa_ptr, b0, sb_ptr,
                   d.data, n0, N, K, stream))
      s.pair = 1;
    else if (group_gemm(s, CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F, false, a0, sa_ptr, b0, sb_ptr,
                        d.data, n0, N, K, stream))
      s.pair = 2;
    else
      s.pair = -1;
  }
  if (s.pair < 0) return KILN_ERR_UNSUPPORTED;
  const size_t needed = static_cast<size_t>(sa_floats + sb_floats);
  if (s.scale_floats < needed) {  // grows once per new largest shape, then reused
    if (s.scales != nullptr) cudaFree(s.scales);
    s.scales = nullptr;
    s.scale_floats = 0;
    if (cudaMalloc(&s.scales, needed * sizeof(float)) != cudaSuccess) return KILN_ERR_LAUNCH;
    s.scale_floats = needed;
  }
  if (!KILN_GG_SA_AS_GIVEN) {
    // SA of group g transposed within the group: [blocks][rows_g], rows fastest.
    for (int64_t g = 0; g < G; ++g) {
      if (count[static_cast<size_t>(g)] == 0) continue;
      transpose_scales<<<64, 256, 0, stream>>>(sa_ptr + begin[g] * blocks,
                                               s.scales + begin[g] * blocks, 1,
                                               gemm_rows(count[static_cast<size_t>(g)]), blocks);
    }
    sa_ptr = s.scales;
  }
  if (s.pair == 2) {
    // Each row of a 128 x 128 block shares the block's scale, so per-row scales are exact.
    expand_block_scales<<<256, 256, 0, stream>>>(sb_ptr, s.scales + sa_floats, G, N, blocks,
                                                 !KILN_GG_SA_AS_GIVEN);
    sb_ptr = s.scales + sa_floats;
  } else if (!KILN_GG_SB_AS_GIVEN) {
    transpose_scales<<<64, 256, 0, stream>>>(sb_ptr, s.scales + sa_floats, G, N / kBlock, blocks);
    sb_ptr = s.scales + sa_floats;
  } else if (blocks % 4 != 0) {
    // [G][nb][blocks] -> [G][nb][ld] with ld = blocks rounded up to 4.
    pad_scale_rows<<<64, 256, 0, stream>>>(sb_ptr, s.scales + sa_floats, G * (N / kBlock), blocks,
                                           (blocks + 3) / 4 * 4);
    sb_ptr = s.scales + sa_floats;
  }
  const cublasLtMatmulMatrixScale_t mode_a = s.pair == 1
                                                 ? CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F
                                                 : CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
  const int64_t sb_ld = s.pair == 1 && KILN_GG_SB_AS_GIVEN ? (blocks + 3) / 4 * 4 : blocks;
  const int64_t sb_group = s.pair == 1 ? (N / kBlock) * sb_ld : N * blocks;
  if (cudaGetLastError() != cudaSuccess) return KILN_ERR_LAUNCH;
  for (int64_t g = 0; g < G; ++g) {
    if (count[static_cast<size_t>(g)] == 0) continue;
    const int64_t n = gemm_rows(count[static_cast<size_t>(g)]);
    const auto* ag = static_cast<const uint8_t*>(a.data) + begin[g] * K;
    const auto* bg = static_cast<const uint8_t*>(b.data) + g * N * K;
    auto* dg = static_cast<__nv_bfloat16*>(d.data) + begin[g] * N;
    if (!group_gemm(s, mode_a, true, ag, sa_ptr + begin[g] * blocks, bg, sb_ptr + g * sb_group, dg,
                    n, N, K, stream))
      return KILN_ERR_UNSUPPORTED;
  }
  return KILN_OK;
}
