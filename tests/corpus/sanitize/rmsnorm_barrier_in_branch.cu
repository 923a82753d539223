// kiln-sanitize: task=rmsnorm expect=synccheck
// The rmsnorm starter with one synchronization bug: the tree reduction's __syncthreads() sits
// inside `if (threadIdx.x < half)`.
// Used on the GPU machine to check synccheck/racecheck's gpu engine (compute-sanitizer) and
// to keep a real compute-sanitizer report as a test fixture.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kThreads = 256;

__global__ void rmsnorm_kernel(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y,
                               int64_t H, float eps) {
  __shared__ float sums[kThreads];
  const int64_t row = blockIdx.x;
  const __nv_bfloat16* xr = x + row * H;
  float sum = 0.f;
  for (int64_t h = threadIdx.x; h < H; h += kThreads) {
    const float v = __bfloat162float(xr[h]);
    sum += v * v;
  }
  sums[threadIdx.x] = sum;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      sums[threadIdx.x] += sums[threadIdx.x + half];
      __syncthreads();  // only the lower half of the block arrives
    }
  }
  const float scale = rsqrtf(sums[0] / static_cast<float>(H) + eps);
  for (int64_t h = threadIdx.x; h < H; h += kThreads) {
    y[row * H + h] = __float2bfloat16_rn(__bfloat162float(xr[h]) * scale * __bfloat162float(w[h]));
  }
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  if (tensors == nullptr || n_tensors != 3 || scalars == nullptr || n_scalars != 1)
    return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& x = tensors[0];  // x[T,H]
  const kiln_tensor& w = tensors[1];  // w[H]
  const kiln_tensor& y = tensors[2];  // y[T,H]
  if (x.dtype != KILN_BF16 || w.dtype != KILN_BF16 || y.dtype != KILN_BF16)
    return KILN_ERR_BAD_ARGUMENT;
  if (x.rank != 2 || w.rank != 1 || y.rank != 2 || scalars[0].dtype != KILN_F64)
    return KILN_ERR_BAD_ARGUMENT;
  const int64_t T = x.shape[0];
  const int64_t H = x.shape[1];
  if (H < 1 || w.shape[0] != H || y.shape[0] != T || y.shape[1] != H) return KILN_ERR_BAD_ARGUMENT;
  // Dense row-major only.
  if (x.strides[1] != 1 || x.strides[0] != H || y.strides[1] != 1 || y.strides[0] != H ||
      w.strides[0] != 1) {
    return KILN_ERR_UNSUPPORTED;
  }
  if (T == 0) return KILN_OK;
  if (T > 2147483647) return KILN_ERR_UNSUPPORTED;
  rmsnorm_kernel<<<static_cast<unsigned>(T), kThreads, 0, stream>>>(
      static_cast<const __nv_bfloat16*>(x.data), static_cast<const __nv_bfloat16*>(w.data),
      static_cast<__nv_bfloat16*>(y.data), H, static_cast<float>(scalars[0].value.f));
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
