// gemm_vectorized: C[M,N] = A[M,K] * B[N,K]^T, fp16 in and out, fp32 accumulation.
//
// The register-blocked kernel (128x128 tile per block, 8x8 outputs per thread) with its memory
// instructions widened: one 16-byte global load per thread per operand and k-step (instead of
// eight 2-byte loads), 16-byte shared-memory reads of the staged tiles (float4: four values of
// A or of B per instruction), and 8-byte stores of C. Wide global loads need K to be a multiple
// of 8 and 16-byte aligned rows (see kiln_launch); M and N are arbitrary.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kBM = 128;
constexpr int kBN = 128;
constexpr int kBK = 16;
constexpr int kThreads = 256;
constexpr int kThreadCols = 16;  // tx = tid % 16
constexpr int kThreadRows = 16;  // ty = tid / 16
// Each thread owns 2x2 groups of 4x4 outputs: rows ty*4 + 64*i + r, columns tx*4 + 64*j + c
// (i, j in {0,1}; r, c in 0..3). Four consecutive values per group make float4 reads possible;
// the 64-element gap keeps a warp's float4 reads of one k-row contiguous (16 tx * 16 bytes).
constexpr int kVec = 4;
constexpr int kGroupStride = 64;
constexpr int kTM = 8;
constexpr int kTN = 8;
constexpr int kPitch = kBM + 4;  // 132 floats = 528 bytes: keeps every float4 16-byte aligned

constexpr int kChunk = 8;                    // halves per 16-byte global load
constexpr int kChunksPerRow = kBK / kChunk;  // 2

static_assert(kThreadCols * kThreadRows == kThreads, "thread grid covers the block");
static_assert(kThreadCols * kVec * 2 == kBN && kThreadCols * kVec == kGroupStride, "N mapping");
static_assert(kThreadRows * kVec * 2 == kBM && kThreadRows * kVec == kGroupStride, "M mapping");
static_assert(kBM * kChunksPerRow == kThreads, "one 16-byte chunk per thread per operand");
static_assert((kPitch * sizeof(float)) % 16 == 0, "float4 alignment of every k-row");
static_assert(kBM == kBN, "A and B slices are loaded by the same code");

// 8 halves -> 8 floats, written down one column of the k-major tile.
__device__ __forceinline__ void store_chunk_transposed(float (*tile)[kPitch], int k_base, int row,
                                                       const uint4& v) {
  const __half2* h = reinterpret_cast<const __half2*>(&v);
#pragma unroll
  for (int e = 0; e < kChunk / 2; ++e) {
    const float2 f = __half22float2(h[e]);
    tile[k_base + 2 * e][row] = f.x;
    tile[k_base + 2 * e + 1][row] = f.y;
  }
}

__global__ void __launch_bounds__(kThreads, 2)
    gemm_tn_vectorized_kernel(const __half* __restrict__ A, const __half* __restrict__ B,
                              __half* __restrict__ C, int M, int N, int K, int64_t lda, int64_t ldb,
                              int64_t ldc, bool c_quads_aligned) {
  __shared__ __align__(16) float As[kBK][kPitch];  // As[k][row of the C tile]
  __shared__ __align__(16) float Bs[kBK][kPitch];  // Bs[k][column of the C tile]

  const int tid = threadIdx.x;
  const int tx = tid % kThreadCols;
  const int ty = tid / kThreadCols;
  const int m0 = blockIdx.y * kBM;
  const int n0 = blockIdx.x * kBN;

  // The 16-byte chunk this thread loads: row tid / 2 of the slice, halves (tid % 2) * 8 .. +7.
  const int load_row = tid / kChunksPerRow;
  const int load_k = (tid % kChunksPerRow) * kChunk;
  const bool a_row_ok = m0 + load_row < M;
  const bool b_row_ok = n0 + load_row < N;
  const __half* a_ptr = A + static_cast<int64_t>(a_row_ok ? m0 + load_row : 0) * lda + load_k;
  const __half* b_ptr = B + static_cast<int64_t>(b_row_ok ? n0 + load_row : 0) * ldb + load_k;

  float acc[kTM][kTN];
#pragma unroll
  for (int i = 0; i < kTM; ++i) {
#pragma unroll
    for (int j = 0; j < kTN; ++j) acc[i][j] = 0.f;
  }

  for (int k0 = 0; k0 < K; k0 += kBK) {
    // K is a multiple of 8, so a chunk is either entirely inside K or entirely past it.
    const bool k_ok = k0 + load_k < K;
    uint4 va = make_uint4(0u, 0u, 0u, 0u);
    uint4 vb = make_uint4(0u, 0u, 0u, 0u);
    if (a_row_ok && k_ok) va = *reinterpret_cast<const uint4*>(a_ptr + k0);
    if (b_row_ok && k_ok) vb = *reinterpret_cast<const uint4*>(b_ptr + k0);
    store_chunk_transposed(As, load_k, load_row, va);
    store_chunk_transposed(Bs, load_k, load_row, vb);
    __syncthreads();

#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      float a[kTM];
      float b[kTN];
#pragma unroll
      for (int g = 0; g < 2; ++g) {
        const float4 va4 = *reinterpret_cast<const float4*>(&As[kk][ty * kVec + g * kGroupStride]);
        const float4 vb4 = *reinterpret_cast<const float4*>(&Bs[kk][tx * kVec + g * kGroupStride]);
        a[g * kVec + 0] = va4.x;
        a[g * kVec + 1] = va4.y;
        a[g * kVec + 2] = va4.z;
        a[g * kVec + 3] = va4.w;
        b[g * kVec + 0] = vb4.x;
        b[g * kVec + 1] = vb4.y;
        b[g * kVec + 2] = vb4.z;
        b[g * kVec + 3] = vb4.w;
      }
#pragma unroll
      for (int i = 0; i < kTM; ++i) {
#pragma unroll
        for (int j = 0; j < kTN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      }
    }
    __syncthreads();
  }

  // acc[i][j] is row ty*4 + (i/4)*64 + i%4, column tx*4 + (j/4)*64 + j%4 of the tile.
#pragma unroll
  for (int i = 0; i < kTM; ++i) {
    const int m = m0 + ty * kVec + (i / kVec) * kGroupStride + i % kVec;
    if (m >= M) continue;
    __half* c_row = C + static_cast<int64_t>(m) * ldc;
#pragma unroll
    for (int g = 0; g < 2; ++g) {
      const int n = n0 + tx * kVec + g * kGroupStride;
      const float* v = &acc[i][g * kVec];
      if (c_quads_aligned && n + kVec <= N) {
        // n is a multiple of 4 and so is ldc: the 8-byte store is aligned.
        uint2 packed;
        *reinterpret_cast<__half2*>(&packed.x) = __floats2half2_rn(v[0], v[1]);
        *reinterpret_cast<__half2*>(&packed.y) = __floats2half2_rn(v[2], v[3]);
        *reinterpret_cast<uint2*>(c_row + n) = packed;
      } else {
#pragma unroll
        for (int c = 0; c < kVec; ++c) {
          if (n + c < N) c_row[n + c] = __float2half_rn(v[c]);
        }
      }
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

bool aligned_to(const void* p, uintptr_t bytes) {
  return (reinterpret_cast<uintptr_t>(p) % bytes) == 0;
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  (void)scalars;
  GemmProblem p;
  const int status = parse_problem(tensors, n_tensors, n_scalars, &p);
  if (status != KILN_OK) return status;
  if (p.m == 0 || p.n == 0) return KILN_OK;
  // 16-byte loads of A and B rows: K, lda, ldb multiples of 8 halves and 16-byte aligned bases.
  if (p.k % kChunk != 0 || p.lda % kChunk != 0 || p.ldb % kChunk != 0 || !aligned_to(p.a, 16) ||
      !aligned_to(p.b, 16)) {
    return KILN_ERR_UNSUPPORTED;
  }
  // 8-byte stores of C where possible; scalar stores otherwise (any N, any ldc).
  const bool c_quads_aligned = p.ldc % kVec == 0 && aligned_to(p.c, 8);

  const int64_t grid_x = (static_cast<int64_t>(p.n) + kBN - 1) / kBN;
  const int64_t grid_y = (static_cast<int64_t>(p.m) + kBM - 1) / kBM;
  if (grid_y > 65535) return KILN_ERR_UNSUPPORTED;
  const dim3 grid(static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y));
  gemm_tn_vectorized_kernel<<<grid, kThreads, 0, stream>>>(
      static_cast<const __half*>(p.a), static_cast<const __half*>(p.b), static_cast<__half*>(p.c),
      p.m, p.n, p.k, p.lda, p.ldb, p.ldc, c_quads_aligned);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
