// quant_fp8_group128: per-token fp8 quantization with 1x128 scales, the step before a
// block-scaled fp8 GEMM (DeepSeek-V3 style). For bf16 x[T, H], H a multiple of 128:
//   scales[t, g] = max |x| over channels 128g..128g+127 / 448   (f32; 1 for an all-zero group)
//   q[t, c]      = e4m3(x[t, c] / scales[t, c / 128])          (saturating, nearest even)
//
// The tensors are row-major and H % 128 == 0, so the 128-channel groups tile x contiguously:
// group b is bytes 256b..256b+255 of x, q bytes 128b.., and scales[b] (flattened). The grid is
// one wave (SMs x resident blocks per SM, from the occupancy API) and strides over warp chunks.
//
// 16 channels per lane and a reciprocal (issue 18). A warp takes 1 KiB chunks (4 groups); lane
// l loads vectors 2l and 2l + 1 (32 contiguous bytes, the second load hits the L1 sectors of the
// first), its 8-lane group reduces the absolute maximum in 3 shuffles (8 channels per lane took
// 4), and it writes its 16 e4m3 values as one 16-byte st.global.cs (8 channels per lane: 8-byte
// stores). kUnroll = 2 chunks keeps 4 x 16 bytes of loads in flight per thread.
//
// The reciprocal: q = x * (1 / scale) instead of x / scale. Per 16 bytes loaded the entry's first
// version ran 8 IEEE divisions (a ~10-instruction sequence each), about 200 instructions per warp
// per 512-byte chunk: at the H200's ~11 bytes per SM per clock of x this is 4 warp instructions
// per clock, the SM's issue limit, so the kernel was bound by issue, not HBM. Here one correctly
// rounded reciprocal per lane and a multiply per value replace them. x * (1 / s) differs
// from x / s by at most ~1.5 fp32 ulps, which moves the e4m3 rounding (3 mantissa bits) by one
// fp8 step only at exact rounding boundaries: inside the meta's q tolerance (rtol 0.125, atol
// 0.002 above e4m3's 2^-9 subnormal step). The scales are still amax / 448, bit for bit.
//
// Built for sm_90a, cuda_fp8.h's __nv_cvt_float2_to_fp8x2 is one cvt.rn.satfinite.e4m3x2.f32
// (sm_89+) per two values. Requirements: H % 128 == 0, contiguous, 16-byte aligned x and q
// (else KILN_ERR_UNSUPPORTED).
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "kiln/abi.h"

namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 2;       // 1 KiB chunks per warp in flight (2 loads each); tunable: 2, 4
constexpr int kGroup = 128;      // channels per scale
constexpr int kLanesPerGroup = kGroup / 16;  // 8 lanes of 16 channels
constexpr int kChunkVecs = 64;   // uint4 vectors of x per warp chunk (4 groups)
constexpr float kE4m3Max = 448.f;

__device__ __forceinline__ void to_floats(const uint4& v, float (&f)[8]) {
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    __nv_bfloat162 h;
    memcpy(&h, &w[i], sizeof h);
    const float2 p = __bfloat1622float2(h);
    f[2 * i] = p.x;
    f[2 * i + 1] = p.y;
  }
}

// Quantizes vectors 2l, 2l + 1 of a 1 KiB chunk (16 channels of lane l; its 8-lane group holds
// the rest of the 128). Every lane of the warp calls it for the same chunk, active or not, so
// the shuffles see the whole warp. pair = index of the lane's first vector in x.
__device__ __forceinline__ void quantize(const uint4& x0, const uint4& x1, int64_t pair,
                                         bool active, uint4* __restrict__ q,
                                         float* __restrict__ scales) {
  float f[16];
  float (&lo)[8] = *reinterpret_cast<float(*)[8]>(f);
  float (&hi)[8] = *reinterpret_cast<float(*)[8]>(f + 8);
  to_floats(x0, lo);
  to_floats(x1, hi);
  float amax = 0.f;
#pragma unroll
  for (int i = 0; i < 16; ++i) amax = fmaxf(amax, fabsf(f[i]));
  if (!active) amax = 0.f;
#pragma unroll
  for (int offset = kLanesPerGroup / 2; offset > 0; offset /= 2)
    amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, offset));
  if (!active) return;
  const float scale = amax > 0.f ? amax / kE4m3Max : 1.f;
  const float inv = 1.f / scale;  // one division per lane, not 16 (see the top of the file)
  uint32_t packed[4] = {0, 0, 0, 0};
#pragma unroll
  for (int i = 0; i < 16; i += 2) {
    const __nv_fp8x2_storage_t pair2 = __nv_cvt_float2_to_fp8x2(
        make_float2(f[i] * inv, f[i + 1] * inv), __NV_SATFINITE, __NV_E4M3);
    packed[i / 4] |= static_cast<uint32_t>(pair2) << (8 * (i % 4));
  }
  __stcs(q + pair / 2, make_uint4(packed[0], packed[1], packed[2], packed[3]));
  if (threadIdx.x % kLanesPerGroup == 0) __stcs(scales + pair / (2 * kLanesPerGroup), scale);
}

__global__ void __launch_bounds__(kThreads)
    quant_fp8_group128_kernel(const uint4* __restrict__ x, uint4* __restrict__ q,
                              float* __restrict__ scales, int64_t n_vec) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (kThreads / 32);
  const int64_t chunks = (n_vec + kChunkVecs - 1) / kChunkVecs;
  // The loop runs on the block's first chunk, so its bound is the same for every thread of the
  // block and all 32 lanes of a warp reach every shuffle. A warp whose chunk lies past the end
  // runs the turn with every lane inactive.
  for (int64_t block_first = static_cast<int64_t>(blockIdx.x) * (kThreads / 32);
       block_first < chunks; block_first += kUnroll * warps) {
    const int64_t first = block_first + threadIdx.x / 32;
    uint4 v[kUnroll][2];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {  // all loads first: 2 x kUnroll vectors in flight
      const int64_t i = (first + u * warps) * kChunkVecs + 2 * lane;
      const bool in = i < n_vec;  // n_vec is a multiple of 16: the pair is whole or absent
      v[u][0] = in ? __ldg(x + i) : make_uint4(0, 0, 0, 0);
      v[u][1] = in ? __ldg(x + i + 1) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t i = (first + u * warps) * kChunkVecs + 2 * lane;
      quantize(v[u][0], v[u][1], i, i < n_vec, q, scales);
    }
  }
}

bool is_contiguous(const kiln_tensor& t) {
  int64_t expected = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    if (t.shape[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.shape[d];
  }
  return true;
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  (void)scalars;
  if (tensors == nullptr || n_tensors != 3 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& x = tensors[0];       // x[T, H] bf16
  const kiln_tensor& q = tensors[1];       // q[T, H] e4m3
  const kiln_tensor& scales = tensors[2];  // scales[T, H / 128] f32
  if (x.dtype != KILN_BF16 || q.dtype != KILN_E4M3 || scales.dtype != KILN_F32 || x.rank != 2 ||
      q.rank != 2 || scales.rank != 2) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t T = x.shape[0], H = x.shape[1];
  if (T < 0 || H < 0 || H % kGroup != 0 || q.shape[0] != T || q.shape[1] != H ||
      scales.shape[0] != T || scales.shape[1] != H / kGroup) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  if (T == 0 || H == 0) return KILN_OK;
  const kiln_tensor* all[] = {&x, &q, &scales};
  for (const kiln_tensor* t : all) {
    if (t->data == nullptr) return KILN_ERR_BAD_ARGUMENT;
    if (!is_contiguous(*t)) return KILN_ERR_UNSUPPORTED;
  }
  if (!aligned16(x.data) || !aligned16(q.data) || reinterpret_cast<uintptr_t>(scales.data) % 4)
    return KILN_ERR_UNSUPPORTED;

  // One wave: as many blocks as are resident at once (the registers decide, not the 2048-thread
  // limit: 48 registers per thread give 5 blocks of 256 per SM on sm_90).
  int device = 0, sms = 0, per_sm = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, quant_fp8_group128_kernel, kThreads,
                                                    0) != cudaSuccess) {
    return KILN_ERR_LAUNCH;
  }
  const int64_t n_vec = T * H / 8;
  const int64_t chunks = (n_vec + kChunkVecs - 1) / kChunkVecs;
  // Enough warps for kUnroll chunks each, capped at one wave of the GPU.
  const int64_t warps_per_block = kThreads / 32;
  int64_t blocks = (chunks + kUnroll * warps_per_block - 1) / (kUnroll * warps_per_block);
  const int64_t max_blocks =
      static_cast<int64_t>(sms > 0 ? sms : 1) * static_cast<int64_t>(per_sm > 0 ? per_sm : 1);
  if (blocks > max_blocks) blocks = max_blocks;
  quant_fp8_group128_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      static_cast<const uint4*>(x.data), static_cast<uint4*>(q.data),
      static_cast<float*>(scales.data), n_vec);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
