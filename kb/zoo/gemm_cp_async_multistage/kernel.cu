// gemm_cp_async_multistage: C[M,N] = A[M,K] * B[N,K]^T, fp16 or bf16 in and out (the dtype of
// the tensors), fp32 accumulation.
//
// gemm_mma_sync_ldmatrix's warp tiling (128x128 block tile, 8 warps of 64x32, mma.m16n8k16 fed
// by ldmatrix) with the global->shared copies made asynchronous: cp.async moves 16-byte chunks
// straight into shared memory without passing through registers, and a ring of kStages
// shared-memory stages keeps the loads of the next kStages-1 k-slices in flight while the
// tensor cores work on the current one. Requirements: K a multiple of 8 and 16-byte aligned rows
// of A and B (checked in kiln_launch); M and N are arbitrary.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kBM = 128;
constexpr int kBN = 128;
constexpr int kBK = 32;
constexpr int kStages = 4;
constexpr int kWarpsM = 2;
constexpr int kWarpsN = 4;
constexpr int kThreads = kWarpsM * kWarpsN * 32;
constexpr int kWarpM = kBM / kWarpsM;  // 64
constexpr int kWarpN = kBN / kWarpsN;  // 32
constexpr int kMmaM = 16;
constexpr int kMmaN = 8;
constexpr int kMmaK = 16;
constexpr int kFragsM = kWarpM / kMmaM;      // 4
constexpr int kFragsN = kWarpN / kMmaN;      // 4
constexpr int kChunk = 8;                    // 16-bit elements per 16-byte chunk
constexpr int kChunksPerRow = kBK / kChunk;  // 4
constexpr int kChunksPerThread = kBM * kChunksPerRow / kThreads;  // 2 per operand
// 40 elements = 80 bytes per row: the padding keeps ldmatrix conflict-free (rows of one 8x8
// matrix start in 16-byte bank groups 5*r mod 8, all different) and keeps rows 16-byte aligned.
constexpr int kPitch = kBK + kChunk;
constexpr int kStageElems = (kBM + kBN) * kPitch;  // A slice then B slice
constexpr size_t kSmemBytes = static_cast<size_t>(kStages) * kStageElems * 2;  // 80 KiB

static_assert(kThreads == 256, "launch configuration");
static_assert(kBM == kBN, "A and B slices use the same copy loop");
static_assert(kBM * kChunksPerRow % kThreads == 0, "every thread copies whole chunks");
static_assert(kWarpM % kMmaM == 0 && kWarpN % (2 * kMmaN) == 0, "warp tile shape");
static_assert(kBK % kMmaK == 0, "k-steps of the mma");
static_assert((kPitch * 2) % 16 == 0, "cp.async and ldmatrix need 16-byte aligned rows");
static_assert(kStages >= 2, "the ring needs a stage to fill while another is read");
static_assert(kSmemBytes > 48 * 1024, "kiln_launch raises the dynamic shared memory limit");

// ---- PTX wrappers ----------------------------------------------------------------------------

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Copy 16 bytes global -> shared, bypassing L1 (.cg). Only src_bytes (0 or 16) are read; the rest
// of the 16 destination bytes are zero-filled, which is how out-of-range rows and k become 0.
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst),
               "l"(__cvta_generic_to_global(src)), "r"(src_bytes)
               : "memory");
}

// Close the group of cp.async issued by this thread since the previous commit.
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Wait until at most kPending of this thread's committed groups are still in flight.
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

// Element-type specifics: the mma instruction and the fp32 -> 16-bit conversions of the epilogue.
template <typename T>
struct Elem;

template <>
struct Elem<__half> {
  __device__ __forceinline__ static void mma(float (&d)[4], const uint32_t (&a)[4],
                                             const uint32_t (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  __device__ __forceinline__ static void store2(__half* p, float x, float y) {
    *reinterpret_cast<__half2*>(p) = __floats2half2_rn(x, y);
  }
  __device__ __forceinline__ static void store1(__half* p, float x) { *p = __float2half_rn(x); }
};

template <>
struct Elem<__nv_bfloat16> {
  __device__ __forceinline__ static void mma(float (&d)[4], const uint32_t (&a)[4],
                                             const uint32_t (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  __device__ __forceinline__ static void store2(__nv_bfloat16* p, float x, float y) {
    *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(x, y);
  }
  __device__ __forceinline__ static void store1(__nv_bfloat16* p, float x) {
    *p = __float2bfloat16_rn(x);
  }
};

// ---- The kernel ------------------------------------------------------------------------------

template <typename T>
__global__ void __launch_bounds__(kThreads, 2)
    gemm_tn_multistage_kernel(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C,
                              int M, int N, int K, int64_t lda, int64_t ldb, int64_t ldc,
                              bool c_pairs_aligned) {
  // Stage s holds As[kBM][kPitch] then Bs[kBN][kPitch], both K-major as in global memory.
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* const smem = reinterpret_cast<T*>(smem_raw);

  const int tid = threadIdx.x;
  const int lane = tid % 32;
  const int warp = tid / 32;
  const int warp_m0 = (warp / kWarpsN) * kWarpM;
  const int warp_n0 = (warp % kWarpsN) * kWarpN;
  const int m0 = blockIdx.y * kBM;
  const int n0 = blockIdx.x * kBN;
  const int num_k_tiles = (K + kBK - 1) / kBK;

  // Issue the cp.async of k-tile `kt` into stage `stage`: 128 rows x 4 chunks per operand,
  // chunk e = tid + 256*l at row e / 4, so a warp copies 8 rows x 64 contiguous bytes.
  auto load_tile = [&](int stage, int kt) {
    T* const as = smem + stage * kStageElems;
    T* const bs = as + kBM * kPitch;
    const int k0 = kt * kBK;
#pragma unroll
    for (int l = 0; l < kChunksPerThread; ++l) {
      const int e = tid + l * kThreads;
      const int r = e / kChunksPerRow;
      const int kc = (e % kChunksPerRow) * kChunk;
      const bool k_ok = k0 + kc < K;  // K % 8 == 0: a chunk is wholly in or wholly out
      const bool a_ok = k_ok && m0 + r < M;
      const bool b_ok = k_ok && n0 + r < N;
      // A zero-byte copy reads nothing, but the address operand must still be a valid global
      // address: point it at the start of the operand.
      const T* a_src = a_ok ? A + static_cast<int64_t>(m0 + r) * lda + k0 + kc : A;
      const T* b_src = b_ok ? B + static_cast<int64_t>(n0 + r) * ldb + k0 + kc : B;
      cp_async_16(smem_addr(as + r * kPitch + kc), a_src, a_ok ? 16 : 0);
      cp_async_16(smem_addr(bs + r * kPitch + kc), b_src, b_ok ? 16 : 0);
    }
  };

  float acc[kFragsM][kFragsN][4];
#pragma unroll
  for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
    for (int j = 0; j < kFragsN; ++j) {
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.f;
    }
  }

  // ldmatrix lane addressing (see gemm_mma_sync_ldmatrix): A lane l -> row l % 16, k (l/16)*8;
  // B lane l -> n (l % 8) + (l/16)*8, k ((l/8) % 2)*8.
  const int a_ld_row = warp_m0 + (lane % 16);
  const int a_ld_k = (lane / 16) * 8;
  const int b_ld_row = warp_n0 + (lane % 8) + (lane / 16) * 8;
  const int b_ld_k = ((lane / 8) % 2) * 8;

  // Prologue: k-tiles 0 .. kStages-2 in flight, one commit group each. A group is committed even
  // when it is empty (past the last k-tile), so that "group g holds k-tile g" stays true and the
  // wait below needs no special case near the end.
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < num_k_tiles) load_tile(s, s);
    cp_async_commit();
  }

  for (int kt = 0; kt < num_k_tiles; ++kt) {
    // Groups committed so far: kStages-1 + kt. Allowing kStages-2 pending means groups
    // 0..kt are complete: this thread's chunks of k-tile kt have landed. The barrier then
    // makes every thread's chunks visible to the whole block, and also tells us every warp is
    // done with k-tile kt-1, whose stage is refilled next.
    cp_async_wait<kStages - 2>();
    __syncthreads();

    const int next = kt + kStages - 1;
    if (next < num_k_tiles) load_tile(next % kStages, next);
    cp_async_commit();

    const T* const as = smem + (kt % kStages) * kStageElems;
    const T* const bs = as + kBM * kPitch;
#pragma unroll
    for (int ks = 0; ks < kBK; ks += kMmaK) {
      uint32_t af[kFragsM][4];
      uint32_t bf[kFragsN][2];
#pragma unroll
      for (int i = 0; i < kFragsM; ++i) {
        ldmatrix_x4(af[i], smem_addr(as + (a_ld_row + i * kMmaM) * kPitch + ks + a_ld_k));
      }
#pragma unroll
      for (int jj = 0; jj < kFragsN / 2; ++jj) {
        uint32_t r[4];
        ldmatrix_x4(r, smem_addr(bs + (b_ld_row + jj * 2 * kMmaN) * kPitch + ks + b_ld_k));
        bf[2 * jj][0] = r[0];
        bf[2 * jj][1] = r[1];
        bf[2 * jj + 1][0] = r[2];
        bf[2 * jj + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
        for (int j = 0; j < kFragsN; ++j) Elem<T>::mma(acc[i][j], af[i], bf[j]);
      }
    }
  }
  cp_async_wait<0>();  // only empty groups can remain; leave nothing in flight at exit

  // Epilogue straight from the accumulators: lane l holds (row l/4, cols 2*(l%4), +1) in c0, c1
  // and row l/4 + 8 in c2, c3 of each m16n8 tile.
  const int group = lane / 4;
  const int col_in_tile = 2 * (lane % 4);
#pragma unroll
  for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
    for (int half_row = 0; half_row < 2; ++half_row) {
      const int m = m0 + warp_m0 + i * kMmaM + group + half_row * 8;
      if (m >= M) continue;
      T* const c_row = C + static_cast<int64_t>(m) * ldc;
#pragma unroll
      for (int j = 0; j < kFragsN; ++j) {
        const int n = n0 + warp_n0 + j * kMmaN + col_in_tile;  // always even
        const float v0 = acc[i][j][2 * half_row];
        const float v1 = acc[i][j][2 * half_row + 1];
        if (c_pairs_aligned && n + 1 < N) {
          Elem<T>::store2(c_row + n, v0, v1);
        } else {
          if (n < N) Elem<T>::store1(c_row + n, v0);
          if (n + 1 < N) Elem<T>::store1(c_row + n + 1, v1);
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
  kiln_dtype dtype;       // KILN_F16 or KILN_BF16, the same for A, B and C
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
  }
  if (t[0].dtype != KILN_F16 && t[0].dtype != KILN_BF16) return KILN_ERR_BAD_ARGUMENT;
  if (t[1].dtype != t[0].dtype || t[2].dtype != t[0].dtype) return KILN_ERR_BAD_ARGUMENT;
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
  p->dtype = t[0].dtype;
  return KILN_OK;
}

bool aligned_to(const void* p, uintptr_t bytes) {
  return (reinterpret_cast<uintptr_t>(p) % bytes) == 0;
}

template <typename T>
int launch(const GemmProblem& p, cudaStream_t stream) {
  // 80 KiB of dynamic shared memory is over the default 48 KiB limit. Setting the attribute is
  // cheap and per device, so it is done on every call rather than cached.
  if (cudaFuncSetAttribute(gemm_tn_multistage_kernel<T>,
                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(kSmemBytes)) != cudaSuccess) {
    return KILN_ERR_LAUNCH;
  }
  const int64_t grid_x = (static_cast<int64_t>(p.n) + kBN - 1) / kBN;
  const int64_t grid_y = (static_cast<int64_t>(p.m) + kBM - 1) / kBM;
  if (grid_y > 65535) return KILN_ERR_UNSUPPORTED;
  const dim3 grid(static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y));
  const bool c_pairs_aligned = p.ldc % 2 == 0 && aligned_to(p.c, 4);
  gemm_tn_multistage_kernel<T><<<grid, kThreads, kSmemBytes, stream>>>(
      static_cast<const T*>(p.a), static_cast<const T*>(p.b), static_cast<T*>(p.c), p.m, p.n, p.k,
      p.lda, p.ldb, p.ldc, c_pairs_aligned);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  (void)scalars;
  GemmProblem p;
  const int status = parse_problem(tensors, n_tensors, n_scalars, &p);
  if (status != KILN_OK) return status;
  if (p.m == 0 || p.n == 0) return KILN_OK;
  // cp.async of 16 bytes: K, lda, ldb multiples of 8 elements and 16-byte aligned bases.
  if (p.k % kChunk != 0 || p.lda % kChunk != 0 || p.ldb % kChunk != 0 || !aligned_to(p.a, 16) ||
      !aligned_to(p.b, 16)) {
    return KILN_ERR_UNSUPPORTED;
  }
  return p.dtype == KILN_BF16 ? launch<__nv_bfloat16>(p, stream) : launch<__half>(p, stream);
}
