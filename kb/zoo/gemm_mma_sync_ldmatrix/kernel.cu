// gemm_mma_sync_ldmatrix: C[M,N] = A[M,K] * B[N,K]^T, fp16 in and out, fp32 accumulation.
//
// The first tensor-core entry. A block of 8 warps computes a 128x128 tile of C; each warp owns a
// 64x32 sub-tile as 4x4 mma.sync.m16n8k16 accumulators (64 fp32 registers per thread). Slices
// of A and B (128x32 halves each) are staged in shared memory by ordinary 16-byte loads and
// stores, and ldmatrix.x4 moves them into the exact register layout mma.sync expects.
// Requirements: K a multiple of 8 and 16-byte aligned rows of A and B (checked in kiln_launch);
// M and N are arbitrary.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kBM = 128;
constexpr int kBN = 128;
constexpr int kBK = 32;
constexpr int kWarpsM = 2;
constexpr int kWarpsN = 4;
constexpr int kThreads = kWarpsM * kWarpsN * 32;
constexpr int kWarpM = kBM / kWarpsM;  // 64 rows per warp
constexpr int kWarpN = kBN / kWarpsN;  // 32 columns per warp
constexpr int kMmaM = 16;
constexpr int kMmaN = 8;
constexpr int kMmaK = 16;
constexpr int kFragsM = kWarpM / kMmaM;      // 4 m16 tiles per warp
constexpr int kFragsN = kWarpN / kMmaN;      // 4 n8 tiles per warp
constexpr int kChunk = 8;                    // halves per 16-byte chunk
constexpr int kChunksPerRow = kBK / kChunk;  // 4
// Row pitch of the staged slices: 32 halves + 8 of padding = 80 bytes. ldmatrix reads 8 rows of
// 16 bytes per phase; at an 80-byte pitch those rows start in 16-byte bank groups 0,5,2,7,4,1,6,3
// (5*r mod 8), all different, so the reads are conflict-free. Without padding (64-byte pitch)
// rows r and r+2 would share a group: a 4-way conflict.
constexpr int kPitch = kBK + kChunk;

static_assert(kThreads == 256, "two 16-byte chunks per thread per operand below");
static_assert(kBM * kChunksPerRow == 2 * kThreads && kBN == kBM, "load mapping");
static_assert(kWarpM % kMmaM == 0 && kWarpN % (2 * kMmaN) == 0, "warp tile shape");
static_assert(kBK % kMmaK == 0, "k-steps of the mma");
static_assert((kPitch * sizeof(__half)) % 16 == 0, "ldmatrix rows must be 16-byte aligned");

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Four 8x8 b16 matrices; lanes 8i..8i+7 give the row addresses of matrix i, and register i of
// every lane receives matrix i's elements (lane l: row l/4, columns 2*(l%4) and 2*(l%4)+1).
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}

// d += a * b for one 16x8x16 tile, fp16 inputs, fp32 accumulators.
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4],
                                          const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__global__ void __launch_bounds__(kThreads, 2)
    gemm_tn_mma_kernel(const __half* __restrict__ A, const __half* __restrict__ B,
                       __half* __restrict__ C, int M, int N, int K, int64_t lda, int64_t ldb,
                       int64_t ldc, bool c_pairs_aligned) {
  // Both slices are K-major, exactly as in global memory: As[row of tile][k], Bs[col of tile][k].
  // K-major A is what mma's ".row" A operand wants, and K-major B (an N x K row-major matrix)
  // is what its ".col" B operand wants, so ldmatrix without .trans serves both.
  __shared__ __align__(16) __half As[kBM][kPitch];
  __shared__ __align__(16) __half Bs[kBN][kPitch];

  const int tid = threadIdx.x;
  const int lane = tid % 32;
  const int warp = tid / 32;
  const int warp_m0 = (warp / kWarpsN) * kWarpM;  // 0 or 64
  const int warp_n0 = (warp % kWarpsN) * kWarpN;  // 0, 32, 64 or 96
  const int m0 = blockIdx.y * kBM;
  const int n0 = blockIdx.x * kBN;

  float acc[kFragsM][kFragsN][4];
#pragma unroll
  for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
    for (int j = 0; j < kFragsN; ++j) {
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.f;
    }
  }

  // ldmatrix row addresses, fixed for the whole loop except for the k offset.
  // A, one m16 x k16 tile = four 8x8 matrices ordered (rows 0-7, k 0-7), (rows 8-15, k 0-7),
  // (rows 0-7, k 8-15), (rows 8-15, k 8-15): registers a0..a3 of the mma A fragment. Lane l
  // points at row l % 16, k offset (l / 16) * 8.
  const int a_ld_row = warp_m0 + (lane % 16);
  const int a_ld_k = (lane / 16) * 8;
  // B, two n8 x k16 tiles = (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15):
  // registers b0, b1 of the first n8 tile, then b0, b1 of the second. Lane l points at
  // n = (l % 8) + (l / 16) * 8, k offset ((l / 8) % 2) * 8.
  const int b_ld_row = warp_n0 + (lane % 8) + (lane / 16) * 8;
  const int b_ld_k = ((lane / 8) % 2) * 8;

  for (int k0 = 0; k0 < K; k0 += kBK) {
    // Global -> shared: 128 rows x 4 chunks per operand, chunk e = tid + 256*l at row e / 4.
#pragma unroll
    for (int l = 0; l < 2; ++l) {
      const int e = tid + l * kThreads;
      const int r = e / kChunksPerRow;
      const int kc = (e % kChunksPerRow) * kChunk;
      const bool k_ok = k0 + kc < K;  // K % 8 == 0: a chunk is wholly in or wholly out
      uint4 va = make_uint4(0u, 0u, 0u, 0u);
      uint4 vb = make_uint4(0u, 0u, 0u, 0u);
      if (k_ok && m0 + r < M) {
        va = *reinterpret_cast<const uint4*>(A + static_cast<int64_t>(m0 + r) * lda + k0 + kc);
      }
      if (k_ok && n0 + r < N) {
        vb = *reinterpret_cast<const uint4*>(B + static_cast<int64_t>(n0 + r) * ldb + k0 + kc);
      }
      *reinterpret_cast<uint4*>(&As[r][kc]) = va;
      *reinterpret_cast<uint4*>(&Bs[r][kc]) = vb;
    }
    __syncthreads();

#pragma unroll
    for (int ks = 0; ks < kBK; ks += kMmaK) {
      uint32_t af[kFragsM][4];
      uint32_t bf[kFragsN][2];
#pragma unroll
      for (int i = 0; i < kFragsM; ++i) {
        ldmatrix_x4(af[i], smem_addr(&As[a_ld_row + i * kMmaM][ks + a_ld_k]));
      }
#pragma unroll
      for (int jj = 0; jj < kFragsN / 2; ++jj) {
        uint32_t r[4];
        ldmatrix_x4(r, smem_addr(&Bs[b_ld_row + jj * 2 * kMmaN][ks + b_ld_k]));
        bf[2 * jj][0] = r[0];
        bf[2 * jj][1] = r[1];
        bf[2 * jj + 1][0] = r[2];
        bf[2 * jj + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
        for (int j = 0; j < kFragsN; ++j) mma_16816(acc[i][j], af[i], bf[j]);
      }
    }
    __syncthreads();  // the slices are overwritten by the next iteration's stores
  }

  // Accumulator layout of one m16n8 tile: lane l holds (row l/4, cols 2*(l%4), +1) in c0, c1
  // and (row l/4 + 8, same cols) in c2, c3.
  const int group = lane / 4;
  const int col_in_tile = 2 * (lane % 4);
#pragma unroll
  for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
    for (int half_row = 0; half_row < 2; ++half_row) {
      const int m = m0 + warp_m0 + i * kMmaM + group + half_row * 8;
      if (m >= M) continue;
      __half* c_row = C + static_cast<int64_t>(m) * ldc;
#pragma unroll
      for (int j = 0; j < kFragsN; ++j) {
        const int n = n0 + warp_n0 + j * kMmaN + col_in_tile;  // always even
        const float v0 = acc[i][j][2 * half_row];
        const float v1 = acc[i][j][2 * half_row + 1];
        if (c_pairs_aligned && n + 1 < N) {
          *reinterpret_cast<__half2*>(c_row + n) = __floats2half2_rn(v0, v1);
        } else {
          if (n < N) c_row[n] = __float2half_rn(v0);
          if (n + 1 < N) c_row[n + 1] = __float2half_rn(v1);
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
  // 4-byte (half2) stores of C where aligned; scalar stores otherwise.
  const bool c_pairs_aligned = p.ldc % 2 == 0 && aligned_to(p.c, 4);

  const int64_t grid_x = (static_cast<int64_t>(p.n) + kBN - 1) / kBN;
  const int64_t grid_y = (static_cast<int64_t>(p.m) + kBM - 1) / kBM;
  if (grid_y > 65535) return KILN_ERR_UNSUPPORTED;
  const dim3 grid(static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y));
  gemm_tn_mma_kernel<<<grid, kThreads, 0, stream>>>(
      static_cast<const __half*>(p.a), static_cast<const __half*>(p.b), static_cast<__half*>(p.c),
      p.m, p.n, p.k, p.lda, p.ldb, p.ldc, c_pairs_aligned);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
