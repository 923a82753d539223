// attention_flash_mma: O = softmax(Q K^T * scale, optional causal mask) V, per (batch, head),
// Q, K, V, O [B,H,S,D] in f16 or bf16, fp32 accumulation and fp32 softmax statistics.
//
// Flash-attention-2 style forward pass. A block of 4 warps owns 64 query rows of one
// (batch, head); each warp owns 16 of them for the whole kernel. The block walks the keys in
// tiles of 64: it copies the K and V tiles into shared memory, each warp computes its 16 x 64
// score tile with mma.sync.m16n8k16 (Q fragments held in registers, K fragments by ldmatrix),
// updates its running row maxima and row sums (online softmax), rescales its output
// accumulators, and multiplies the probabilities by V with mma.sync again, reusing the score
// accumulators as the A operand (no trip through shared memory; see NOTES.md for the fragment
// mapping) and reading V fragments by ldmatrix.trans. The score matrix never reaches memory.
//
// With causal = 1, query row q sees keys 0..q: key tiles entirely after a query tile are
// skipped and the diagonal tile is masked element by element. Query tiles are scheduled
// longest first (blockIdx.y = 0 takes the last query tile).
//
// Constraints (KILN_ERR_UNSUPPORTED otherwise): D in {64, 128}; S a multiple of 64;
// contiguous [B,H,S,D] tensors with 16-byte aligned data; S / 64 <= 65535; B * H < 2^31.
// Scalars: causal (i64, 0 or 1), scale (f64, finite); or, as a candidate of the task
// tasks/attention_fwd, the scalar causal alone with scale 1/sqrt(D), bf16, and the row
// log-sum-exp written to a fifth tensor LSE (see kiln_launch).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kiln/abi.h"

namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kTileQ = 64;  // query rows per block: 16 per warp
constexpr int kTileK = 64;  // keys per tile
constexpr int kPad = 8;  // 16 bytes of padding per shared-memory row (bank-conflict-free ldmatrix)

// ---- PTX wrappers -------------------------------------------------------------------------

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Four 8x8 b16 matrices; lanes 8m..8m+7 give the row addresses of matrix m, and register m
// of lane l receives row l/4, columns 2(l%4) and 2(l%4)+1 of matrix m.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");  // reads shared memory: keep it after the barrier that filled it
}

// The same, transposed: register m of lane l receives rows 2(l%4) and 2(l%4)+1, column l/4.
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}

struct HalfType {
  using T = __half;
  __device__ static uint32_t pack(float lo, float hi) {
    const __half2 h = __floats2half2_rn(lo, hi);  // lo in the low 16 bits
    uint32_t u;
    memcpy(&u, &h, sizeof u);
    return u;
  }
  // d = a * b + d, a 16x16 (row), b 16x8 (col), fp32 accumulators.
  __device__ static void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm(  // a pure register operation: the compiler may schedule it freely
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

struct Bf16Type {
  using T = __nv_bfloat16;
  __device__ static uint32_t pack(float lo, float hi) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    uint32_t u;
    memcpy(&u, &h, sizeof u);
    return u;
  }
  __device__ static void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

// ---- The kernel ---------------------------------------------------------------------------

// Copies 64 rows of D elements (contiguous rows, row stride D) into a padded shared tile.
template <int D>
__device__ __forceinline__ void load_tile(uint16_t* tile, const uint16_t* __restrict__ src) {
  constexpr int kChunksPerRow = D / 8;  // 16-byte chunks
  constexpr int kChunks = kTileK * kChunksPerRow;
#pragma unroll
  for (int i = 0; i < kChunks / kThreads; ++i) {
    const int chunk = threadIdx.x + i * kThreads;
    const int row = chunk / kChunksPerRow;
    const int col = (chunk % kChunksPerRow) * 8;
    const uint4 v = __ldg(reinterpret_cast<const uint4*>(src + row * D + col));
    *reinterpret_cast<uint4*>(tile + row * (D + kPad) + col) = v;
  }
}

template <typename Type, int D>
__global__ void __launch_bounds__(kThreads)
    attention_kernel(const uint16_t* __restrict__ q, const uint16_t* __restrict__ k,
                     const uint16_t* __restrict__ v, uint16_t* __restrict__ o,
                     float* __restrict__ lse, int seq, float scale_log2, int causal) {
  constexpr int kLd = D + kPad;           // shared row stride in elements
  constexpr int kDSteps = D / 16;         // k-steps of Q K^T, and pairs of 8-wide n-tiles of P V
  constexpr int kKeyTiles8 = kTileK / 8;  // 8-key n-tiles of a score tile
  __shared__ __align__(16) uint16_t k_tile[kTileK * kLd];
  __shared__ __align__(16) uint16_t v_tile[kTileK * kLd];

  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int group = lane >> 2;  // "groupID" of the PTX fragment tables
  const int quad = lane & 3;    // "threadID_in_group"

  const int q_tiles = seq / kTileQ;
  const int q_tile = q_tiles - 1 - static_cast<int>(blockIdx.y);  // longest rows first
  const int q0 = q_tile * kTileQ;
  const int64_t head = static_cast<int64_t>(blockIdx.x) * seq * D;  // (b*H + h) * S * D

  // Q: through shared memory (the K tile's space) into A fragments kept for the whole kernel.
  // qf[s] covers this warp's 16 rows and columns 16s..16s+15. Matrix m of the x4 load is
  // rows 8(m&1).., columns 8(m>>1)..: that is a0 (rows 0-7, cols 0-7), a1 (rows 8-15),
  // a2 (cols 8-15), a3 (rows 8-15, cols 8-15), the A layout of m16n8k16.
  load_tile<D>(k_tile, q + head + static_cast<int64_t>(q0) * D);
  __syncthreads();
  uint32_t qf[kDSteps][4];
  {
    const int row = warp * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
    const int col = (lane >> 4) * 8;
#pragma unroll
    for (int s = 0; s < kDSteps; ++s)
      ldmatrix_x4(qf[s], smem_addr(k_tile + row * kLd + col + s * 16));
  }
  __syncthreads();  // k_tile is overwritten by the first key tile

  // Accumulator fragments (C layout of m16n8k16): c0, c1 at row `group`, columns 2*quad and
  // 2*quad+1 of the 8-wide n-tile; c2, c3 the same columns at row group + 8.
  float acc[D / 8][4];
#pragma unroll
  for (int t = 0; t < D / 8; ++t) acc[t][0] = acc[t][1] = acc[t][2] = acc[t][3] = 0.f;
  float row_max[2] = {-INFINITY, -INFINITY};  // rows group, group + 8 (log2-scaled scores)
  float row_sum[2] = {0.f, 0.f};  // this thread's share; summed over the quad at the end
  const int my_row[2] = {q0 + warp * 16 + group, q0 + warp * 16 + group + 8};

  const int key_tiles = causal ? q_tile + 1 : seq / kTileK;
  for (int kt = 0; kt < key_tiles; ++kt) {
    const int k0 = kt * kTileK;
    load_tile<D>(k_tile, k + head + static_cast<int64_t>(k0) * D);
    load_tile<D>(v_tile, v + head + static_cast<int64_t>(k0) * D);
    __syncthreads();

    // S = Q K^T for 16 rows x 64 keys. B (16 x 8, k = d, n = key) is K read row-wise:
    // b0 of lane l is K[key group][d 2*quad, 2*quad+1], a non-transposed ldmatrix of K rows.
    // Matrix m of the x4 load: keys 8(m>>1).., d 8(m&1)..: b0, b1 of one n-tile, then b0, b1
    // of the next.
    float s[kKeyTiles8][4];
#pragma unroll
    for (int t = 0; t < kKeyTiles8; ++t) s[t][0] = s[t][1] = s[t][2] = s[t][3] = 0.f;
    {
      const int key = (lane & 7) + (lane >> 4) * 8;
      const int col = ((lane >> 3) & 1) * 8;
#pragma unroll
      for (int ds = 0; ds < kDSteps; ++ds) {
#pragma unroll
        for (int kp = 0; kp < kKeyTiles8 / 2; ++kp) {
          uint32_t b[4];
          ldmatrix_x4(b, smem_addr(k_tile + (kp * 16 + key) * kLd + ds * 16 + col));
          Type::mma(s[2 * kp], qf[ds], b[0], b[1]);
          Type::mma(s[2 * kp + 1], qf[ds], b[2], b[3]);
        }
      }
    }

    // Online softmax in base 2: x = score * scale * log2(e), p = 2^(x - running max).
    const bool diagonal = causal && kt == q_tile;
    float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int t = 0; t < kKeyTiles8; ++t) {
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const int r = c >> 1;
        const int key = k0 + t * 8 + quad * 2 + (c & 1);
        float x = s[t][c] * scale_log2;
        if (diagonal && key > my_row[r]) x = -INFINITY;
        s[t][c] = x;
        tile_max[r] = fmaxf(tile_max[r], x);
      }
    }
    float alpha[2];
    float base[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      // The four lanes of a quad hold the 64 columns of the same two rows.
      tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 1));
      tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 2));
      const float new_max = fmaxf(row_max[r], tile_max[r]);
      // A row with every score so far masked keeps max -inf; use 0 as the base so that
      // 2^(-inf - base) = 0 instead of 2^(-inf + inf) = NaN.
      base[r] = new_max == -INFINITY ? 0.f : new_max;
      alpha[r] = exp2f(row_max[r] - base[r]);  // 0 on the first tile (row_max = -inf)
      row_max[r] = new_max;
      row_sum[r] *= alpha[r];
    }
#pragma unroll
    for (int t = 0; t < kKeyTiles8; ++t) {
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const int r = c >> 1;
        const float p = exp2f(s[t][c] - base[r]);
        s[t][c] = p;
        row_sum[r] += p;
      }
    }
#pragma unroll
    for (int t = 0; t < D / 8; ++t) {
      acc[t][0] *= alpha[0];
      acc[t][1] *= alpha[0];
      acc[t][2] *= alpha[1];
      acc[t][3] *= alpha[1];
    }

    // O += P V. The A fragment of k-step j (keys 16j..16j+15) is built from the score
    // accumulators of n-tiles 2j and 2j+1: a0 = (row group, keys 16j + 2quad + {0,1}) = s[2j]
    // c0,c1; a1 = row group+8 = s[2j] c2,c3; a2 = keys + 8 = s[2j+1] c0,c1; a3 = s[2j+1] c2,c3.
    // B (16 x 8, k = key, n = d) is V[key][d] read column-wise: ldmatrix.trans of V rows.
    // Matrix m of the x4 load: keys 8(m&1).., d 8(m>>1)..: b0, b1 of one d n-tile, then of
    // the next.
    {
      const int key = (lane & 7) + ((lane >> 3) & 1) * 8;
      const int col = (lane >> 4) * 8;
#pragma unroll
      for (int j = 0; j < kTileK / 16; ++j) {
        uint32_t a[4];
        a[0] = Type::pack(s[2 * j][0], s[2 * j][1]);
        a[1] = Type::pack(s[2 * j][2], s[2 * j][3]);
        a[2] = Type::pack(s[2 * j + 1][0], s[2 * j + 1][1]);
        a[3] = Type::pack(s[2 * j + 1][2], s[2 * j + 1][3]);
#pragma unroll
        for (int dp = 0; dp < kDSteps; ++dp) {
          uint32_t b[4];
          ldmatrix_x4_trans(b, smem_addr(v_tile + (j * 16 + key) * kLd + dp * 16 + col));
          Type::mma(acc[2 * dp], a, b[0], b[1]);
          Type::mma(acc[2 * dp + 1], a, b[2], b[3]);
        }
      }
    }
    __syncthreads();  // k_tile and v_tile are refilled by the next iteration
  }

  // Finish the row sums over the quad, normalize, and store pairs of outputs.
  float inv[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float sum = row_sum[r];
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    inv[r] = 1.f / sum;
    // The row's log-sum-exp in natural units (row_max is in log2 units): m ln 2 + ln l.
    if (lse != nullptr && quad == 0)
      lse[head / D + my_row[r]] = row_max[r] * 0.69314718055994531f + logf(sum);
  }
  uint16_t* out0 = o + head + static_cast<int64_t>(my_row[0]) * D + quad * 2;
  uint16_t* out1 = o + head + static_cast<int64_t>(my_row[1]) * D + quad * 2;
#pragma unroll
  for (int t = 0; t < D / 8; ++t) {
    *reinterpret_cast<uint32_t*>(out0 + t * 8) = Type::pack(acc[t][0] * inv[0], acc[t][1] * inv[0]);
    *reinterpret_cast<uint32_t*>(out1 + t * 8) = Type::pack(acc[t][2] * inv[1], acc[t][3] * inv[1]);
  }
}

// ---- Host side ----------------------------------------------------------------------------

bool is_contiguous(const kiln_tensor& t) {
  int64_t expected = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    if (t.shape[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.shape[d];
  }
  return true;
}

template <typename Type, int D>
void launch(dim3 grid, const kiln_tensor* t, float* lse, int seq, float scale_log2, int causal,
            cudaStream_t stream) {
  attention_kernel<Type, D><<<grid, kThreads, 0, stream>>>(
      static_cast<const uint16_t*>(t[0].data), static_cast<const uint16_t*>(t[1].data),
      static_cast<const uint16_t*>(t[2].data), static_cast<uint16_t*>(t[3].data), lse, seq,
      scale_log2, causal);
}

}  // namespace

// Two calling conventions, told apart by the counts:
//   the zoo's op attention_fwd (kb/zoo/README.md): Q, K, V, O (f16 or bf16) and the scalars
//     causal (i64) and scale (f64);
//   the task tasks/attention_fwd: Q, K, V, O (bf16) and LSE (f32 [B, H, S], the row
//     log-sum-exp) and the one scalar causal (i64); the scale is 1/sqrt(D).
extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  const bool task_abi = n_tensors == 5 && n_scalars == 1;
  if (tensors == nullptr || scalars == nullptr || !(task_abi || (n_tensors == 4 && n_scalars == 2)))
    return KILN_ERR_BAD_ARGUMENT;
  const kiln_scalar& causal = scalars[0];
  if (causal.dtype != KILN_I64 || (causal.name != nullptr && strcmp(causal.name, "causal") != 0))
    return KILN_ERR_BAD_ARGUMENT;
  if (causal.value.i != 0 && causal.value.i != 1) return KILN_ERR_BAD_ARGUMENT;
  double scale = 0;
  if (!task_abi) {
    const kiln_scalar& given = scalars[1];
    if (given.dtype != KILN_F64 || (given.name != nullptr && strcmp(given.name, "scale") != 0))
      return KILN_ERR_BAD_ARGUMENT;
    if (!std::isfinite(given.value.f)) return KILN_ERR_UNSUPPORTED;
    scale = given.value.f;
  }

  const kiln_dtype dtype = tensors[0].dtype;  // Q, K, V, O: one dtype, one shape
  if (dtype != KILN_BF16 && (task_abi || dtype != KILN_F16)) return KILN_ERR_BAD_ARGUMENT;
  for (int i = 0; i < 4; ++i) {
    const kiln_tensor& t = tensors[i];
    if (t.dtype != dtype || t.rank != 4) return KILN_ERR_BAD_ARGUMENT;
    for (int d = 0; d < 4; ++d) {
      if (t.shape[d] < 0 || t.shape[d] != tensors[0].shape[d]) return KILN_ERR_BAD_ARGUMENT;
    }
  }
  const int64_t batch = tensors[0].shape[0];
  const int64_t heads = tensors[0].shape[1];
  const int64_t seq = tensors[0].shape[2];
  const int64_t dim = tensors[0].shape[3];
  float* lse = nullptr;
  if (task_abi) {
    const kiln_tensor& l = tensors[4];
    if (l.dtype != KILN_F32 || l.rank != 3 || l.shape[0] != batch || l.shape[1] != heads ||
        l.shape[2] != seq)
      return KILN_ERR_BAD_ARGUMENT;
    if (l.data == nullptr && batch * heads * seq > 0) return KILN_ERR_BAD_ARGUMENT;
    if (!is_contiguous(l)) return KILN_ERR_UNSUPPORTED;
    lse = static_cast<float*>(l.data);
    scale = 1.0 / std::sqrt(static_cast<double>(dim));
  }
  if (batch == 0 || heads == 0 || seq == 0 || dim == 0) return KILN_OK;
  for (int i = 0; i < 4; ++i) {
    if (tensors[i].data == nullptr) return KILN_ERR_BAD_ARGUMENT;
    if (!is_contiguous(tensors[i]) || reinterpret_cast<uintptr_t>(tensors[i].data) % 16 != 0) {
      return KILN_ERR_UNSUPPORTED;
    }
  }
  if (dim != 64 && dim != 128) return KILN_ERR_UNSUPPORTED;
  if (seq % kTileQ != 0 || seq / kTileQ > 65535) return KILN_ERR_UNSUPPORTED;
  if (batch * heads > 2147483647) return KILN_ERR_UNSUPPORTED;

  const dim3 grid(static_cast<unsigned>(batch * heads), static_cast<unsigned>(seq / kTileQ));
  const float scale_log2 = static_cast<float>(scale * 1.4426950408889634);  // * log2(e)
  const int c = static_cast<int>(causal.value.i);
  const int s = static_cast<int>(seq);
  if (dtype == KILN_F16) {
    if (dim == 64)
      launch<HalfType, 64>(grid, tensors, lse, s, scale_log2, c, stream);
    else
      launch<HalfType, 128>(grid, tensors, lse, s, scale_log2, c, stream);
  } else {
    if (dim == 64)
      launch<Bf16Type, 64>(grid, tensors, lse, s, scale_log2, c, stream);
    else
      launch<Bf16Type, 128>(grid, tensors, lse, s, scale_log2, c, stream);
  }
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
