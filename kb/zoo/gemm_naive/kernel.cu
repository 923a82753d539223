// gemm_naive: C[M,N] = A[M,K] * B[N,K]^T, fp16 in and out, fp32 accumulation.
//
// One thread per element of C, reading its row of A and its row of B straight from global
// memory. No reuse through shared memory, no tensor cores: this is the correctness baseline
// the rest of the gemm_tn progression is measured against. Any M, N, K works.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kiln/abi.h"

namespace {

// threadIdx.x walks along N so that the 32 lanes of a warp write 32 consecutive elements of C.
constexpr int kBlockX = 32;  // columns of C per block
constexpr int kBlockY = 8;   // rows of C per block

__global__ void __launch_bounds__(kBlockX* kBlockY)
    gemm_tn_naive_kernel(const __half* __restrict__ A, const __half* __restrict__ B,
                         __half* __restrict__ C, int M, int N, int K, int64_t lda, int64_t ldb,
                         int64_t ldc) {
  const int n = blockIdx.x * kBlockX + threadIdx.x;
  const int m = blockIdx.y * kBlockY + threadIdx.y;
  if (m >= M || n >= N) return;

  // Both operands are K-major, so the dot product walks two contiguous rows. Lanes of a warp
  // share m (the A element is broadcast) and read 32 different rows of B: every B load touches
  // 32 sectors, which L1 then serves for the next few k. That traffic is what smem tiling fixes.
  const __half* a = A + static_cast<int64_t>(m) * lda;
  const __half* b = B + static_cast<int64_t>(n) * ldb;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc = fmaf(__half2float(a[k]), __half2float(b[k]), acc);
  C[static_cast<int64_t>(m) * ldc + n] = __float2half_rn(acc);
}

// ---- Argument checking --------------------------------------------------------------------

struct GemmProblem {
  const void* a;
  const void* b;
  void* c;
  int m, n, k;
  int64_t lda, ldb, ldc;  // row strides in elements
};

// The row stride of a rank-2 tensor that is row-major with unit column stride, or -1.
// The stride of a dimension of extent <= 1 is never used, so any value is accepted there.
int64_t row_major_ld(const kiln_tensor& t) {
  const int64_t rows = t.shape[0];
  const int64_t cols = t.shape[1];
  if (cols > 1 && t.strides[1] != 1) return -1;
  if (rows <= 1) return cols;
  return t.strides[0] >= cols ? t.strides[0] : -1;
}

int parse_problem(const kiln_tensor* t, int n_tensors, int n_scalars, GemmProblem* p) {
  if (t == nullptr || n_tensors != 3 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  for (int i = 0; i < 3; ++i) {
    if (t[i].rank != 2 || t[i].shape[0] < 0 || t[i].shape[1] < 0) return KILN_ERR_BAD_ARGUMENT;
    if (t[i].dtype != KILN_F16) return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t M = t[0].shape[0];
  const int64_t K = t[0].shape[1];
  const int64_t N = t[1].shape[0];
  if (t[1].shape[1] != K || t[2].shape[0] != M || t[2].shape[1] != N) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  if ((M * K > 0 && t[0].data == nullptr) || (N * K > 0 && t[1].data == nullptr) ||
      (M * N > 0 && t[2].data == nullptr)) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX) return KILN_ERR_UNSUPPORTED;
  p->lda = row_major_ld(t[0]);
  p->ldb = row_major_ld(t[1]);
  p->ldc = row_major_ld(t[2]);
  if (p->lda < 0 || p->ldb < 0 || p->ldc < 0) return KILN_ERR_UNSUPPORTED;
  p->a = t[0].data;
  p->b = t[1].data;
  p->c = t[2].data;
  p->m = static_cast<int>(M);
  p->n = static_cast<int>(N);
  p->k = static_cast<int>(K);
  return KILN_OK;
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  (void)scalars;
  GemmProblem p;
  const int status = parse_problem(tensors, n_tensors, n_scalars, &p);
  if (status != KILN_OK) return status;
  if (p.m == 0 || p.n == 0) return KILN_OK;

  const int64_t grid_x = (static_cast<int64_t>(p.n) + kBlockX - 1) / kBlockX;
  const int64_t grid_y = (static_cast<int64_t>(p.m) + kBlockY - 1) / kBlockY;
  if (grid_y > 65535) return KILN_ERR_UNSUPPORTED;
  const dim3 grid(static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y));
  const dim3 block(kBlockX, kBlockY);
  gemm_tn_naive_kernel<<<grid, block, 0, stream>>>(
      static_cast<const __half*>(p.a), static_cast<const __half*>(p.b), static_cast<__half*>(p.c),
      p.m, p.n, p.k, p.lda, p.ldb, p.ldc);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
