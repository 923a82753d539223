// gemm_register_blocking: C[M,N] = A[M,K] * B[N,K]^T, fp16 in and out, fp32 accumulation.
//
// A block of 256 threads computes a 128x128 tile of C; each thread owns an 8x8 block of it in
// registers. Per k the thread reads 8 values of A and 8 of B from shared memory and issues 64
// FFMAs, so shared-memory traffic per FMA drops from 2 loads (gemm_smem_tiling) to 1/4 load.
// Loads stay scalar and bounds-checked: any M, N, K works.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kBM = 128;                // rows of C per block
constexpr int kBN = 128;                // columns of C per block
constexpr int kBK = 16;                 // k-step staged in shared memory
constexpr int kTM = 8;                  // rows of C per thread
constexpr int kTN = 8;                  // columns of C per thread
constexpr int kThreadCols = kBN / kTN;  // 16
constexpr int kThreadRows = kBM / kTM;  // 16
constexpr int kThreads = kThreadCols * kThreadRows;
// Staged tiles are stored k-major (transposed): As[k][m], so that for a fixed k the values a
// thread needs lie along one row. +4 floats of padding spreads the transposing stores a bit.
constexpr int kPitch = kBM + 4;

static_assert(kThreads == 256, "the launch below uses 256 threads");
static_assert(kBM == kBN, "A and B slices are loaded by the same loop");
static_assert((kBM * kBK) % kThreads == 0, "every thread loads the same number of elements");
constexpr int kLoadsPerThread = kBM * kBK / kThreads;  // 8 per operand

// (kThreads, 2): at most 128 registers, so two blocks (16 warps) fit on an SM.
__global__ void __launch_bounds__(kThreads, 2)
    gemm_tn_regblock_kernel(const __half* __restrict__ A, const __half* __restrict__ B,
                            __half* __restrict__ C, int M, int N, int K, int64_t lda, int64_t ldb,
                            int64_t ldc) {
  __shared__ float As[kBK][kPitch];  // As[k][row of the C tile]
  __shared__ float Bs[kBK][kPitch];  // Bs[k][column of the C tile]

  const int tid = threadIdx.x;
  // A thread owns rows ty + 16*i and columns tx + 16*j (i, j = 0..7): strided rather than
  // contiguous, so for fixed j the 16 tx of a half-warp read 16 consecutive words of Bs
  // (conflict-free) and the two ty of a warp read two broadcast words of As.
  const int tx = tid % kThreadCols;
  const int ty = tid / kThreadCols;
  const int m0 = blockIdx.y * kBM;
  const int n0 = blockIdx.x * kBN;

  float acc[kTM][kTN];
#pragma unroll
  for (int i = 0; i < kTM; ++i) {
#pragma unroll
    for (int j = 0; j < kTN; ++j) acc[i][j] = 0.f;
  }

  for (int k0 = 0; k0 < K; k0 += kBK) {
    // Element e = tid + 256*l of a 128x16 slice sits at row e / 16, k e % 16: a warp reads 16
    // consecutive halves (32 bytes) from each of two rows.
#pragma unroll
    for (int l = 0; l < kLoadsPerThread; ++l) {
      const int e = tid + l * kThreads;
      const int r = e / kBK;
      const int kk = e % kBK;
      const int k = k0 + kk;
      const bool k_ok = k < K;
      const int gm = m0 + r;
      const int gn = n0 + r;
      As[kk][r] = (gm < M && k_ok) ? __half2float(A[static_cast<int64_t>(gm) * lda + k]) : 0.f;
      Bs[kk][r] = (gn < N && k_ok) ? __half2float(B[static_cast<int64_t>(gn) * ldb + k]) : 0.f;
    }
    __syncthreads();

#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      float a[kTM];
      float b[kTN];
#pragma unroll
      for (int i = 0; i < kTM; ++i) a[i] = As[kk][ty + i * kThreadRows];
#pragma unroll
      for (int j = 0; j < kTN; ++j) b[j] = Bs[kk][tx + j * kThreadCols];
        // The outer product: 64 FMAs from 16 shared-memory loads.
#pragma unroll
      for (int i = 0; i < kTM; ++i) {
#pragma unroll
        for (int j = 0; j < kTN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      }
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < kTM; ++i) {
    const int m = m0 + ty + i * kThreadRows;
    if (m >= M) continue;
    __half* c_row = C + static_cast<int64_t>(m) * ldc;
#pragma unroll
    for (int j = 0; j < kTN; ++j) {
      const int n = n0 + tx + j * kThreadCols;
      if (n < N) c_row[n] = __float2half_rn(acc[i][j]);
    }
  }
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

  const int64_t grid_x = (static_cast<int64_t>(p.n) + kBN - 1) / kBN;
  const int64_t grid_y = (static_cast<int64_t>(p.m) + kBM - 1) / kBM;
  if (grid_y > 65535) return KILN_ERR_UNSUPPORTED;
  const dim3 grid(static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y));
  gemm_tn_regblock_kernel<<<grid, kThreads, 0, stream>>>(
      static_cast<const __half*>(p.a), static_cast<const __half*>(p.b), static_cast<__half*>(p.c),
      p.m, p.n, p.k, p.lda, p.ldb, p.ldc);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
