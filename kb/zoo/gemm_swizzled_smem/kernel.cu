// gemm_swizzled_smem: C[M,N] = A[M,K] * B[N,K]^T, fp16 in and out, fp32 accumulation.
//
// gemm_cp_async_multistage with the padded shared-memory rows replaced by an XOR swizzle: each
// staged slice is 128 rows x 64 halves (128 bytes per row, no padding), and chunk c of row r is
// stored at chunk position c ^ (r % 8). Both the cp.async writes (8 chunks of one row) and the
// ldmatrix reads (one chunk of 8 consecutive rows) then hit 8 distinct 16-byte bank groups.
// The k-step grows to 64 (3 stages, 96 KiB) so that a row is exactly one 128-byte bank sweep.
// Requirements: K a multiple of 8 and 16-byte aligned rows of A and B (checked in kiln_launch);
// M and N are arbitrary.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kBM = 128;
constexpr int kBN = 128;
constexpr int kBK = 64;  // 64 halves = 128 bytes: one shared-memory row is exactly 8 chunks
constexpr int kStages = 3;
constexpr int kWarpsM = 2;
constexpr int kWarpsN = 4;
constexpr int kThreads = kWarpsM * kWarpsN * 32;
constexpr int kWarpM = kBM / kWarpsM;  // 64
constexpr int kWarpN = kBN / kWarpsN;  // 32
constexpr int kMmaM = 16;
constexpr int kMmaN = 8;
constexpr int kMmaK = 16;
constexpr int kFragsM = kWarpM / kMmaM;                           // 4
constexpr int kFragsN = kWarpN / kMmaN;                           // 4
constexpr int kChunk = 8;                                         // halves per 16-byte chunk
constexpr int kChunksPerRow = kBK / kChunk;                       // 8
constexpr int kChunksPerThread = kBM * kChunksPerRow / kThreads;  // 4 per operand
constexpr int kTileElems = kBM * kBK;                             // one operand slice, no padding
constexpr int kStageElems = 2 * kTileElems;                       // A slice then B slice
constexpr size_t kSmemBytes = static_cast<size_t>(kStages) * kStageElems * sizeof(__half);

static_assert(kThreads == 256, "launch configuration");
static_assert(kBM == kBN, "A and B slices use the same copy loop and layout");
static_assert(kChunksPerRow == 8, "the XOR swizzle below permutes exactly 8 chunks per row");
static_assert(kBM * kChunksPerRow % kThreads == 0, "every thread copies whole chunks");
static_assert(kThreads % kChunksPerRow == 0, "a thread's chunk column is the same for all l");
static_assert(kWarpM % kMmaM == 0 && kWarpN % (2 * kMmaN) == 0, "warp tile shape");
static_assert(kWarpM % 8 == 0 && kWarpN % 8 == 0, "ldmatrix row groups start at multiples of 8");
static_assert(kBK % kMmaK == 0, "k-steps of the mma");
static_assert(kSmemBytes > 48 * 1024, "kiln_launch raises the dynamic shared memory limit");

// ---- Swizzled layout --------------------------------------------------------------------------
// A slice is 128 rows x 64 halves = 128 rows of 8 chunks of 16 bytes, stored without padding.
// Chunk c of row r is stored at chunk position c ^ (r % 8) of that row. Why: a row is 128 bytes,
// the width of the 32 banks, so unswizzled, chunk c of every row would sit in the same 4 banks.
// ldmatrix reads chunk c of 8 consecutive rows at once (an 8-way conflict); cp.async writes 8
// chunks of one row (no conflict). With the XOR, 8 consecutive rows r0..r0+7 (r0 % 8 == 0) put
// chunk c at the 8 distinct positions c ^ 0 .. c ^ 7, and the 8 chunks of one row still fill all
// 8 positions: both access patterns are conflict-free, with no padding bytes.
__device__ __forceinline__ int swizzled(int row, int chunk) {
  return row * kBK + ((chunk ^ (row % 8)) * kChunk);
}

// ---- PTX wrappers ----------------------------------------------------------------------------

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared (.cg: not cached in L1). Only src_bytes (0 or 16) are read; the rest
// of the destination is zero-filled.
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst),
               "l"(__cvta_generic_to_global(src)), "r"(src_bytes)
               : "memory");
}

__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}

__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4],
                                          const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// ---- The main loop -----------------------------------------------------------------------------

struct Operands {
  const __half* A;
  const __half* B;
  int M, N, K;
  int64_t lda, ldb;
};

using Accumulators = float[kFragsM][kFragsN][4];

// Accumulates into acc the product of rows m0..m0+127 of A and rows n0..n0+127 of B over k-tiles
// [kt_begin, kt_end) (k-tile t covers k = 64t .. 64t+63). Out-of-range rows and k contribute 0.
// Called by all 256 threads of the block with the same arguments. On return every cp.async has
// completed and the block has passed a barrier, so smem may be reused at once.
__device__ __forceinline__ void mainloop(const Operands& op, int m0, int n0, int kt_begin,
                                         int kt_end, __half* smem, Accumulators& acc) {
  const int tid = threadIdx.x;
  const int lane = tid % 32;
  const int warp = tid / 32;
  const int warp_m0 = (warp / kWarpsN) * kWarpM;
  const int warp_n0 = (warp % kWarpsN) * kWarpN;
  const int num_tiles = kt_end - kt_begin;

  // Copy mapping: chunk e = tid + 256*l is row e / 8, chunk column e % 8 (= tid % 8 for every l).
  // A warp copies 4 whole rows, 128 contiguous bytes each.
  const int copy_chunk = tid % kChunksPerRow;
  const int copy_row0 = tid / kChunksPerRow;
  constexpr int kCopyRowStep = kThreads / kChunksPerRow;  // 32

  auto load_tile = [&](int stage, int kt) {
    __half* const as = smem + stage * kStageElems;
    __half* const bs = as + kTileElems;
    const int k = kt * kBK + copy_chunk * kChunk;
    const bool k_ok = k < op.K;  // K % 8 == 0: a chunk is wholly in or wholly out
#pragma unroll
    for (int l = 0; l < kChunksPerThread; ++l) {
      const int r = copy_row0 + l * kCopyRowStep;
      const bool a_ok = k_ok && m0 + r < op.M;
      const bool b_ok = k_ok && n0 + r < op.N;
      // A zero-byte copy reads nothing, but its address must still be a valid global address.
      const __half* a_src = a_ok ? op.A + static_cast<int64_t>(m0 + r) * op.lda + k : op.A;
      const __half* b_src = b_ok ? op.B + static_cast<int64_t>(n0 + r) * op.ldb + k : op.B;
      cp_async_16(smem_addr(as + swizzled(r, copy_chunk)), a_src, a_ok ? 16 : 0);
      cp_async_16(smem_addr(bs + swizzled(r, copy_chunk)), b_src, b_ok ? 16 : 0);
    }
  };

  // ldmatrix lane addressing. A (m16 x k16 = four 8x8 matrices in a0..a3 order): lane l points
  // at row l % 16, chunk (l / 16) of the k16 step. B (two n8 x k16 tiles): lane l points at
  // n = (l % 8) + (l / 16) * 8, chunk (l / 8) % 2 of the k16 step.
  const int a_ld_row = warp_m0 + (lane % 16);
  const int a_ld_chunk = lane / 16;
  const int b_ld_row = warp_n0 + (lane % 8) + (lane / 16) * 8;
  const int b_ld_chunk = (lane / 8) % 2;

  // Prologue: one commit group per stage, even when empty, so group g always holds tile g.
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < num_tiles) load_tile(s, kt_begin + s);
    cp_async_commit();
  }

  for (int t = 0; t < num_tiles; ++t) {
    // kStages-1+t groups committed; at most kStages-2 pending => tiles 0..t have landed for this
    // thread; the barrier publishes them block-wide and retires the stage of tile t-1.
    cp_async_wait<kStages - 2>();
    __syncthreads();

    const int next = t + kStages - 1;
    if (next < num_tiles) load_tile(next % kStages, kt_begin + next);
    cp_async_commit();

    const __half* const as = smem + (t % kStages) * kStageElems;
    const __half* const bs = as + kTileElems;
#pragma unroll
    for (int ks = 0; ks < kBK / kMmaK; ++ks) {
      uint32_t af[kFragsM][4];
      uint32_t bf[kFragsN][2];
#pragma unroll
      for (int i = 0; i < kFragsM; ++i) {
        const int row = a_ld_row + i * kMmaM;
        ldmatrix_x4(af[i], smem_addr(as + swizzled(row, 2 * ks + a_ld_chunk)));
      }
#pragma unroll
      for (int jj = 0; jj < kFragsN / 2; ++jj) {
        const int row = b_ld_row + jj * 2 * kMmaN;
        uint32_t r[4];
        ldmatrix_x4(r, smem_addr(bs + swizzled(row, 2 * ks + b_ld_chunk)));
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
  }
  cp_async_wait<0>();
  __syncthreads();  // all warps are done reading smem before a caller refills it
}

// Position of accumulator element acc[i][j][v] inside the 128x128 block tile: lane l holds
// (row l/4, cols 2*(l%4), +1) of each m16n8 tile in v = 0, 1 and row l/4 + 8 in v = 2, 3.
struct FragCoord {
  int row0;  // tile row of acc[0][0][0]
  int col0;  // tile column of acc[0][0][0]; always even
};

__device__ __forceinline__ FragCoord frag_coord() {
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  return {(warp / kWarpsN) * kWarpM + lane / 4, (warp % kWarpsN) * kWarpN + 2 * (lane % 4)};
}

__device__ __forceinline__ void zero(Accumulators& acc) {
#pragma unroll
  for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
    for (int j = 0; j < kFragsN; ++j) {
#pragma unroll
      for (int v = 0; v < 4; ++v) acc[i][j][v] = 0.f;
    }
  }
}

// Rounds the accumulators to fp16 and writes the in-range part of the tile at (m0, n0) of C.
__device__ __forceinline__ void store_tile_f16(const Accumulators& acc, __half* C, int M, int N,
                                               int64_t ldc, bool c_pairs_aligned, int m0, int n0) {
  const FragCoord fc = frag_coord();
#pragma unroll
  for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
    for (int half_row = 0; half_row < 2; ++half_row) {
      const int m = m0 + fc.row0 + i * kMmaM + half_row * 8;
      if (m >= M) continue;
      __half* const c_row = C + static_cast<int64_t>(m) * ldc;
#pragma unroll
      for (int j = 0; j < kFragsN; ++j) {
        const int n = n0 + fc.col0 + j * kMmaN;
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

// ---- The kernel ------------------------------------------------------------------------------

__global__ void __launch_bounds__(kThreads, 2)
    gemm_tn_swizzled_kernel(Operands op, __half* __restrict__ C, int64_t ldc,
                            bool c_pairs_aligned) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __half* const smem = reinterpret_cast<__half*>(smem_raw);
  const int m0 = blockIdx.y * kBM;
  const int n0 = blockIdx.x * kBN;
  const int num_k_tiles = (op.K + kBK - 1) / kBK;

  Accumulators acc;
  zero(acc);
  mainloop(op, m0, n0, 0, num_k_tiles, smem, acc);
  store_tile_f16(acc, C, op.M, op.N, ldc, c_pairs_aligned, m0, n0);
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
  // cp.async of 16 bytes: K, lda, ldb multiples of 8 halves and 16-byte aligned bases.
  if (p.k % kChunk != 0 || p.lda % kChunk != 0 || p.ldb % kChunk != 0 || !aligned_to(p.a, 16) ||
      !aligned_to(p.b, 16)) {
    return KILN_ERR_UNSUPPORTED;
  }
  // 96 KiB of dynamic shared memory: over the default 48 KiB limit.
  if (cudaFuncSetAttribute(gemm_tn_swizzled_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(kSmemBytes)) != cudaSuccess) {
    return KILN_ERR_LAUNCH;
  }
  const int64_t grid_x = (static_cast<int64_t>(p.n) + kBN - 1) / kBN;
  const int64_t grid_y = (static_cast<int64_t>(p.m) + kBM - 1) / kBM;
  if (grid_y > 65535) return KILN_ERR_UNSUPPORTED;
  const dim3 grid(static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y));
  const Operands op{static_cast<const __half*>(p.a),
                    static_cast<const __half*>(p.b),
                    p.m,
                    p.n,
                    p.k,
                    p.lda,
                    p.ldb};
  const bool c_pairs_aligned = p.ldc % 2 == 0 && aligned_to(p.c, 4);
  gemm_tn_swizzled_kernel<<<grid, kThreads, kSmemBytes, stream>>>(op, static_cast<__half*>(p.c),
                                                                  p.ldc, c_pairs_aligned);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
