// gemm_smem_tiling: C[M,N] = A[M,K] * B[N,K]^T, fp16 in and out, fp32 accumulation.
//
// A 32x32 block of threads computes a 32x32 tile of C, one element per thread, walking K in
// steps of 32. At each step the block stages a 32x32 slice of A and of B in shared memory with
// coalesced loads; each staged element is then read by 32 threads instead of being fetched
// from global memory 32 times. Every load and store is bounds-checked: any M, N, K works.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kTile = 32;  // side of the C tile, the k-step, and the block's x and y extent
constexpr int kThreads = kTile * kTile;
static_assert(kThreads <= 1024, "one thread per element of the tile");

__global__ void __launch_bounds__(kThreads)
    gemm_tn_smem_kernel(const __half* __restrict__ A, const __half* __restrict__ B,
                        __half* __restrict__ C, int M, int N, int K, int64_t lda, int64_t ldb,
                        int64_t ldc) {
  // Tiles are kept as fp32 so the inner loop is plain FFMA. Rows are K-major (k fastest), the
  // layout both operands have in global memory. The +1 pad makes the column walk of Bs below
  // (32 lanes at stride kTile+1 words) hit 32 different banks.
  __shared__ float As[kTile][kTile + 1];  // As[row of the C tile][k]
  __shared__ float Bs[kTile][kTile + 1];  // Bs[column of the C tile][k]

  const int tx = threadIdx.x;  // column of C in the tile; k when loading
  const int ty = threadIdx.y;  // row of C in the tile; row of the slice when loading
  const int m0 = blockIdx.y * kTile;
  const int n0 = blockIdx.x * kTile;

  // Loading: thread (tx, ty) fetches element k0+tx of row ty of each slice, so a warp (fixed
  // ty, tx = 0..31) reads 64 contiguous bytes of one row.
  const int a_row = m0 + ty;
  const int b_row = n0 + ty;
  const __half* a_ptr = A + static_cast<int64_t>(a_row) * lda;
  const __half* b_ptr = B + static_cast<int64_t>(b_row) * ldb;

  float acc = 0.f;
  for (int k0 = 0; k0 < K; k0 += kTile) {
    const int k = k0 + tx;
    As[ty][tx] = (a_row < M && k < K) ? __half2float(a_ptr[k]) : 0.f;
    Bs[ty][tx] = (b_row < N && k < K) ? __half2float(b_ptr[k]) : 0.f;
    __syncthreads();  // the slices are complete before anyone reads them
#pragma unroll
    for (int kk = 0; kk < kTile; ++kk) {
      // As[ty][kk] is one address per warp (broadcast); Bs[tx][kk] is 32 distinct banks.
      acc = fmaf(As[ty][kk], Bs[tx][kk], acc);
    }
    __syncthreads();  // everyone is done reading before the next step overwrites the slices
  }

  const int m = m0 + ty;
  const int n = n0 + tx;
  if (m < M && n < N) C[static_cast<int64_t>(m) * ldc + n] = __float2half_rn(acc);
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

  const int64_t grid_x = (static_cast<int64_t>(p.n) + kTile - 1) / kTile;
  const int64_t grid_y = (static_cast<int64_t>(p.m) + kTile - 1) / kTile;
  if (grid_y > 65535) return KILN_ERR_UNSUPPORTED;
  const dim3 grid(static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y));
  const dim3 block(kTile, kTile);
  gemm_tn_smem_kernel<<<grid, block, 0, stream>>>(
      static_cast<const __half*>(p.a), static_cast<const __half*>(p.b), static_cast<__half*>(p.c),
      p.m, p.n, p.k, p.lda, p.ldb, p.ldc);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
