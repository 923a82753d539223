// histogram_radix_pass: the counting step of one LSD radix-sort pass. counts[d] = the number of
// keys[i] (int32, read as their uint32 bit pattern) whose digit ((uint32)key >> shift) & 255 is
// d, for a shift in 0..24.
//
// Privatized histograms, the standard answer to atomic contention:
//   - A fixed grid (one wave: SMs x resident blocks) strides over the keys with 16-byte loads;
//     grid-stride keeps the number of block histograms (and of global atomics) independent of N.
//   - Each warp counts into its own 256-bin histogram in shared memory (8 per block, 8 KiB), so
//     shared atomics only collide inside a warp; random keys then hit distinct bins mostly.
//   - At the end thread d adds bin d of the 8 warp histograms and does one atomicAdd on
//     counts[d] in global memory: 256 global atomics per block, whatever N is.
// counts is zeroed with cudaMemsetAsync on the stream first (integer adds commute, so the
// result does not depend on the order of the atomics). Requirements: N < 2^31, contiguous
// keys (else KILN_ERR_UNSUPPORTED); 16-byte aligned keys use uint4 loads.
#include <cuda_runtime.h>

#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kBins = 256;

__global__ void __launch_bounds__(kThreads)
    histogram_kernel(const uint32_t* __restrict__ keys, int64_t n, int shift, int vector_ok,
                     unsigned* __restrict__ counts) {
  __shared__ unsigned warp_hist[kWarps][kBins];
  for (int i = threadIdx.x; i < kWarps * kBins; i += kThreads) (&warp_hist[0][0])[i] = 0;
  __syncthreads();
  unsigned* mine = warp_hist[threadIdx.x >> 5];
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  const int64_t thread = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  int64_t tail = 0;  // first key left to the scalar loop
  if (vector_ok) {
    const int64_t quads = n / 4;
    const uint4* src = reinterpret_cast<const uint4*>(keys);
    for (int64_t q = thread; q < quads; q += stride) {
      const uint4 k = __ldg(src + q);
      atomicAdd(&mine[(k.x >> shift) & 255u], 1u);
      atomicAdd(&mine[(k.y >> shift) & 255u], 1u);
      atomicAdd(&mine[(k.z >> shift) & 255u], 1u);
      atomicAdd(&mine[(k.w >> shift) & 255u], 1u);
    }
    tail = quads * 4;
  }
  for (int64_t i = tail + thread; i < n; i += stride) {
    atomicAdd(&mine[(__ldg(keys + i) >> shift) & 255u], 1u);
  }
  __syncthreads();
  for (int d = threadIdx.x; d < kBins; d += kThreads) {
    unsigned sum = 0;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) sum += warp_hist[w][d];
    if (sum != 0) atomicAdd(&counts[d], sum);
  }
}

int wave_blocks() {
  int device = 0, sms = 0, per_sm = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, histogram_kernel, kThreads, 0) !=
          cudaSuccess) {
    (void)cudaGetLastError();
    return 132 * 4;
  }
  return (sms > 0 ? sms : 132) * (per_sm > 0 ? per_sm : 1);
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  if (tensors == nullptr || n_tensors != 2 || scalars == nullptr || n_scalars != 1 ||
      scalars[0].dtype != KILN_I64 || scalars[0].value.i < 0 || scalars[0].value.i > 24) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const kiln_tensor& keys = tensors[0];    // keys[N]
  const kiln_tensor& counts = tensors[1];  // counts[256]
  if (keys.dtype != KILN_I32 || counts.dtype != KILN_I32 || keys.rank != 1 || counts.rank != 1 ||
      keys.shape[0] < 0 || counts.shape[0] != kBins) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t n = keys.shape[0];
  if (counts.data == nullptr || (n > 0 && keys.data == nullptr)) return KILN_ERR_BAD_ARGUMENT;
  if (n >= INT32_MAX || (n > 1 && keys.strides[0] != 1) || counts.strides[0] != 1) {
    return KILN_ERR_UNSUPPORTED;
  }
  auto* cp = static_cast<unsigned*>(counts.data);
  if (cudaMemsetAsync(cp, 0, kBins * sizeof(unsigned), stream) != cudaSuccess) {
    return KILN_ERR_LAUNCH;
  }
  if (n == 0) return KILN_OK;
  const auto* kp = static_cast<const uint32_t*>(keys.data);
  const int vector_ok = reinterpret_cast<uintptr_t>(kp) % 16 == 0;
  const int64_t needed = (n + 4 * kThreads - 1) / (4 * kThreads);
  const int64_t blocks = needed < wave_blocks() ? needed : wave_blocks();
  histogram_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      kp, n, static_cast<int>(scalars[0].value.i), vector_ok, cp);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
