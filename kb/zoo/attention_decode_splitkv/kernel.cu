// attention_decode_splitkv: decode attention (one query token per head) against a long bf16 KV
// cache, D = 128, grouped query heads (HQ = G * HK, G <= 8), split-KV across blocks plus a
// combine pass that merges the splits by their log-sum-exp.
//
// Decode attention reads the whole KV cache (4*B*HK*S*D bytes) for 4*B*HQ*S*D flops: G flops
// per byte, so HBM bandwidth is the limit and the design is about keeping enough loads in
// flight on every SM:
//   - Split kernel, grid (splits, HK, B), 128 threads. A block owns one KV head of one batch
//     and a range of `chunk` keys, and serves all G query heads of that KV head at once, so
//     each K and V row is read from HBM once, not G times.
//   - The block's 4 warps take interleaved rounds of 16 keys, 8 per half-warp. A lane holds 8 of the 128
//     dims (one 16-byte load per row), so a half-warp reads a 256-byte row per instruction and
//     has 8 rows (8 x 16 bytes per lane) in flight at once. Scores: 8-dim partial dots per
//     lane, summed over the 16 lanes with 4 xor-shuffles; scale*log2(e) is folded into q.
//   - Online softmax per half-warp in base 2: the 8 scores of a step give one running-max
//     update and one rescale of the G x 8 output accumulators per step, not per key.
//   - The 8 half-warp states (m, l, o) merge through shared memory. With one split the block
//     writes O in bf16; otherwise it writes o/l (fp32) and lse = m + log2(l) to a workspace.
//   - Combine kernel, one block of 128 threads per (b, query head): O = Σ_i 2^(lse_i - M) o_i /
//     Σ_i 2^(lse_i - M) with M = max lse_i, rounded to bf16 once.
// The split count fills one wave (SMs x resident blocks per SM, from the occupancy API);
// chunks are multiples of 64 keys, so only the last split is ragged (masked keys score -inf).
//
// Workspace: fp32 partial outputs and lse for up to kMaxPartials (row, split) pairs, 8.5 MiB,
// cudaMalloc'd by the first call on a device and kept for the process; splits are capped to
// fit. Concurrent calls on different streams of one device would share it: serialize them.
// Requirements (else KILN_ERR_UNSUPPORTED): bf16, D = 128, HQ / HK <= 8, contiguous tensors
// with 16-byte aligned Q, K and V, S < 2^31. S = 0 gives O = 0.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>

#include "kiln/abi.h"

namespace {

constexpr int kD = 128;
constexpr int kThreads = 128;
constexpr int kHalves = kThreads / 16;           // half-warps per block
constexpr int kStep = 8;                         // keys per half-warp step
constexpr int kKeysPerRound = kHalves * kStep;   // 64: chunks are multiples of this
constexpr int kMaxGroup = 8;
constexpr int kMaxSplits = 64;
constexpr int64_t kMaxPartials = 16384;          // (row, split) pairs the workspace holds
constexpr int kMaxDevices = 16;

// 8 bf16 (one uint4) to fp32: a bf16 is the high half of a float.
__device__ __forceinline__ void widen8(const uint4& u, float f[8]) {
  const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    f[2 * i] = __uint_as_float(w[i] << 16);
    f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
  }
}

template <int G>
__global__ void __launch_bounds__(kThreads)
    decode_split_kernel(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                        const __nv_bfloat16* __restrict__ v, __nv_bfloat16* __restrict__ out,
                        float* __restrict__ part_o, float* __restrict__ part_lse, int HQ, int HK,
                        int S, int chunk, int splits, float scale_log2) {
  const int split = blockIdx.x, kv = blockIdx.y, b = blockIdx.z;
  const int lane = threadIdx.x & 15, half = threadIdx.x >> 4;
  const int s_begin = split * chunk;
  const int s_end = min(S, s_begin + chunk);
  const size_t head = static_cast<size_t>(b) * HK + kv;
  const uint4* kh = reinterpret_cast<const uint4*>(k + head * S * kD) + lane;
  const uint4* vh = reinterpret_cast<const uint4*>(v + head * S * kD) + lane;
  const size_t row0 = static_cast<size_t>(b) * HQ + static_cast<size_t>(kv) * G;  // first q row

  float qf[G][8];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    widen8(__ldg(reinterpret_cast<const uint4*>(q + (row0 + g) * kD) + lane), qf[g]);
#pragma unroll
    for (int d = 0; d < 8; ++d) qf[g][d] *= scale_log2;
  }
  float m[G], l[G], o[G][8];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    m[g] = -INFINITY;
    l[g] = 0.f;
#pragma unroll
    for (int d = 0; d < 8; ++d) o[g][d] = 0.f;
  }

  // The loop runs per warp (the shuffles need all 32 lanes): warp w takes 16 keys per round,
  // its lower half-warp the first 8, its upper half the next 8 (masked past s_end).
  const int warp_first = s_begin + (threadIdx.x >> 5) * 2 * kStep;
  for (int warp_base = warp_first; warp_base < s_end; warp_base += kKeysPerRound) {
    const int base = warp_base + (half & 1) * kStep;
    uint4 kr[kStep];
#pragma unroll
    for (int j = 0; j < kStep; ++j) {
      kr[j] = base + j < s_end ? __ldg(kh + static_cast<size_t>(base + j) * (kD / 8))
                               : make_uint4(0, 0, 0, 0);
    }
    float sc[G][kStep];
#pragma unroll
    for (int j = 0; j < kStep; ++j) {
      float kf[8];
      widen8(kr[j], kf);
#pragma unroll
      for (int g = 0; g < G; ++g) {
        float dot = 0.f;
#pragma unroll
        for (int d = 0; d < 8; ++d) dot = fmaf(qf[g][d], kf[d], dot);
        sc[g][j] = dot;
      }
    }
    // Sum the 16 lanes' partial dots: xor offsets below 16 stay inside the half-warp.
#pragma unroll
    for (int offset = 8; offset > 0; offset >>= 1) {
#pragma unroll
      for (int j = 0; j < kStep; ++j) {
#pragma unroll
        for (int g = 0; g < G; ++g) sc[g][j] += __shfl_xor_sync(0xffffffffu, sc[g][j], offset);
      }
    }
    uint4 vr[kStep];
#pragma unroll
    for (int j = 0; j < kStep; ++j) {
      vr[j] = base + j < s_end ? __ldg(vh + static_cast<size_t>(base + j) * (kD / 8))
                               : make_uint4(0, 0, 0, 0);
    }
    // One running-max update per step. Until a half-warp has seen a key its m stays -inf; the
    // reference point `pivot` is then 0, so the correction and p are 2^-inf = 0, not NaN.
#pragma unroll
    for (int g = 0; g < G; ++g) {
      float step_max = -INFINITY;
#pragma unroll
      for (int j = 0; j < kStep; ++j) {
        if (base + j >= s_end) sc[g][j] = -INFINITY;
        step_max = fmaxf(step_max, sc[g][j]);
      }
      const float m_new = fmaxf(m[g], step_max);
      const float pivot = m_new == -INFINITY ? 0.f : m_new;
      const float correction = exp2f(m[g] - pivot);  // 0 while m = -inf
      l[g] *= correction;
#pragma unroll
      for (int d = 0; d < 8; ++d) o[g][d] *= correction;
#pragma unroll
      for (int j = 0; j < kStep; ++j) {
        sc[g][j] = exp2f(sc[g][j] - pivot);  // masked keys: 2^-inf = 0
        l[g] += sc[g][j];
      }
      m[g] = m_new;
    }
#pragma unroll
    for (int j = 0; j < kStep; ++j) {
      float vf[8];
      widen8(vr[j], vf);
#pragma unroll
      for (int g = 0; g < G; ++g) {
#pragma unroll
        for (int d = 0; d < 8; ++d) o[g][d] = fmaf(sc[g][j], vf[d], o[g][d]);
      }
    }
  }

  // Merge the half-warps. A half-warp that got no key has m = -inf, l = 0, o = 0: weight 0.
  __shared__ float s_m[kHalves][G], s_l[kHalves][G];
  __shared__ __align__(16) float s_o[kHalves][G][kD];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    if (lane == 0) {
      s_m[half][g] = m[g];
      s_l[half][g] = l[g];
    }
    float4* dst = reinterpret_cast<float4*>(&s_o[half][g][lane * 8]);
    dst[0] = make_float4(o[g][0], o[g][1], o[g][2], o[g][3]);
    dst[1] = make_float4(o[g][4], o[g][5], o[g][6], o[g][7]);
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < G * kD; idx += kThreads) {
    const int g = idx / kD, d = idx % kD;
    float M = -INFINITY;
#pragma unroll
    for (int h = 0; h < kHalves; ++h) M = fmaxf(M, s_m[h][g]);
    float L = 0.f, O = 0.f;
#pragma unroll
    for (int h = 0; h < kHalves; ++h) {
      const float w = exp2f(s_m[h][g] - M);
      L = fmaf(s_l[h][g], w, L);
      O = fmaf(s_o[h][g][d], w, O);
    }
    const size_t row = row0 + g;
    if (splits == 1) {
      out[row * kD + d] = __float2bfloat16_rn(O / L);
    } else {
      const size_t slot = row * splits + split;
      part_o[slot * kD + d] = O / L;
      if (d == 0) part_lse[slot] = M + log2f(L);
    }
  }
}

// One block per (b, query head), thread d: merges the splits of output element d.
__global__ void __launch_bounds__(kD)
    decode_combine_kernel(const float* __restrict__ part_o, const float* __restrict__ part_lse,
                          __nv_bfloat16* __restrict__ out, int splits) {
  const size_t row = blockIdx.x;
  const int d = threadIdx.x;
  const float* lse = part_lse + row * splits;
  float M = -INFINITY;
  for (int i = 0; i < splits; ++i) M = fmaxf(M, lse[i]);
  float sum = 0.f, acc = 0.f;
  for (int i = 0; i < splits; ++i) {
    const float w = exp2f(lse[i] - M);
    sum += w;
    acc = fmaf(w, part_o[(row * splits + i) * kD + d], acc);
  }
  out[row * kD + d] = __float2bfloat16_rn(acc / sum);
}

bool is_contiguous(const kiln_tensor& t) {
  int64_t expected = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    if (t.shape[d] > 1 && t.strides[d] != expected) return false;
    expected *= t.shape[d];
  }
  return true;
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// This device's workspace (kMaxPartials x (kD + 1) floats), allocated on first use and kept
// for the life of the process; nullptr if it cannot be had.
float* device_workspace() {
  static std::mutex mutex;
  static float* buffers[kMaxDevices] = {};
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) {
    (void)cudaGetLastError();
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(mutex);
  if (buffers[device] == nullptr) {
    void* p = nullptr;
    if (cudaMalloc(&p, static_cast<size_t>(kMaxPartials) * (kD + 1) * sizeof(float)) !=
        cudaSuccess) {
      (void)cudaGetLastError();  // an allocation failure is not sticky; clear it
      return nullptr;
    }
    buffers[device] = static_cast<float*>(p);
  }
  return buffers[device];
}

// Blocks of the split kernel that one wave holds: SMs x resident blocks per SM.
template <int G>
int64_t wave_blocks() {
  int device = 0, sms = 0, per_sm = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, decode_split_kernel<G>, kThreads,
                                                    0) != cudaSuccess) {
    (void)cudaGetLastError();
    return 4 * 132;
  }
  return static_cast<int64_t>(sms > 0 ? sms : 132) * (per_sm > 0 ? per_sm : 1);
}

// Picks the split count and enqueues the split kernel (and the combine when it split).
template <int G>
int run(const kiln_tensor& q, const kiln_tensor& k, const kiln_tensor& v, __nv_bfloat16* out,
        int64_t B, int64_t HQ, int64_t HK, int64_t S, double scale, cudaStream_t stream) {
  // As many blocks as one wave holds (never more: a second, partial wave would idle SMs), no
  // more splits than 64-key rounds, and within the workspace.
  const int64_t rounds = (S + kKeysPerRound - 1) / kKeysPerRound;
  int64_t splits = std::max<int64_t>(1, wave_blocks<G>() / (B * HK));
  splits = std::min<int64_t>({splits, rounds, kMaxSplits, kMaxPartials / (B * HQ)});
  float* workspace = splits > 1 ? device_workspace() : nullptr;
  if (workspace == nullptr) splits = 1;
  const int64_t chunk = ((rounds + splits - 1) / splits) * kKeysPerRound;
  splits = (S + chunk - 1) / chunk;  // every split non-empty
  float* part_o = workspace;
  float* part_lse = workspace != nullptr ? workspace + kMaxPartials * kD : nullptr;
  const dim3 grid(static_cast<unsigned>(splits), static_cast<unsigned>(HK),
                  static_cast<unsigned>(B));
  const auto scale_log2 = static_cast<float>(scale * 1.4426950408889634);
  decode_split_kernel<G><<<grid, kThreads, 0, stream>>>(
      static_cast<const __nv_bfloat16*>(q.data), static_cast<const __nv_bfloat16*>(k.data),
      static_cast<const __nv_bfloat16*>(v.data), out, part_o, part_lse, static_cast<int>(HQ),
      static_cast<int>(HK), static_cast<int>(S), static_cast<int>(chunk),
      static_cast<int>(splits), scale_log2);
  if (cudaGetLastError() != cudaSuccess) return KILN_ERR_LAUNCH;
  if (splits > 1) {
    decode_combine_kernel<<<static_cast<unsigned>(B * HQ), kD, 0, stream>>>(
        part_o, part_lse, out, static_cast<int>(splits));
  }
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  if (tensors == nullptr || n_tensors != 4 || scalars == nullptr || n_scalars != 1 ||
      scalars[0].dtype != KILN_F64) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const kiln_tensor &q = tensors[0], &k = tensors[1], &v = tensors[2], &o = tensors[3];
  if (q.rank != 3 || k.rank != 4 || v.rank != 4 || o.rank != 3) return KILN_ERR_BAD_ARGUMENT;
  const kiln_dtype dtype = q.dtype;
  if ((dtype != KILN_BF16 && dtype != KILN_F16) || k.dtype != dtype || v.dtype != dtype ||
      o.dtype != dtype) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t B = q.shape[0], HQ = q.shape[1], D = q.shape[2];
  const int64_t HK = k.shape[1], S = k.shape[2];
  for (int i = 0; i < 4; ++i) {
    if (k.shape[i] != v.shape[i]) return KILN_ERR_BAD_ARGUMENT;
  }
  if (B < 0 || HQ < 0 || HK < 0 || S < 0 || k.shape[0] != B || k.shape[3] != D ||
      o.shape[0] != B || o.shape[1] != HQ || o.shape[2] != D) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  if (HK == 0 ? HQ != 0 : HQ % HK != 0) return KILN_ERR_BAD_ARGUMENT;
  if (dtype != KILN_BF16 || D != kD) return KILN_ERR_UNSUPPORTED;
  if (B * HQ == 0) return KILN_OK;
  const int64_t G = HQ / HK;
  if (G > kMaxGroup || S >= INT32_MAX || B > 65535 || HK > 65535 || B * HQ > INT32_MAX) {
    return KILN_ERR_UNSUPPORTED;
  }
  if (q.data == nullptr || k.data == nullptr || v.data == nullptr || o.data == nullptr) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  if (!is_contiguous(q) || !is_contiguous(k) || !is_contiguous(v) || !is_contiguous(o) ||
      !aligned16(q.data) || !aligned16(k.data) || !aligned16(v.data)) {
    return KILN_ERR_UNSUPPORTED;
  }
  auto* out = static_cast<__nv_bfloat16*>(o.data);
  if (S == 0) {  // nothing to attend to: O = 0
    return cudaMemsetAsync(out, 0, static_cast<size_t>(B * HQ * kD) * 2, stream) == cudaSuccess
               ? KILN_OK
               : KILN_ERR_LAUNCH;
  }

  switch (G) {
    case 1: return run<1>(q, k, v, out, B, HQ, HK, S, scalars[0].value.f, stream);
    case 2: return run<2>(q, k, v, out, B, HQ, HK, S, scalars[0].value.f, stream);
    case 3: return run<3>(q, k, v, out, B, HQ, HK, S, scalars[0].value.f, stream);
    case 4: return run<4>(q, k, v, out, B, HQ, HK, S, scalars[0].value.f, stream);
    case 5: return run<5>(q, k, v, out, B, HQ, HK, S, scalars[0].value.f, stream);
    case 6: return run<6>(q, k, v, out, B, HQ, HK, S, scalars[0].value.f, stream);
    case 7: return run<7>(q, k, v, out, B, HQ, HK, S, scalars[0].value.f, stream);
    default: return run<8>(q, k, v, out, B, HQ, HK, S, scalars[0].value.f, stream);
  }
}
