// CHEAT: writes outside the outputs. The last tile row is stored without a bounds check,
// so one row past the end of C is overwritten (here: explicitly, a row of zeros).
// Must be caught by: guard_bands.
#include "../common/gemm_core.cuh"

__global__ void scribble_past_end(__half* c, int64_t M, int64_t N) {
  for (int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; j < N;
       j += int64_t{gridDim.x} * blockDim.x) {
    c[M * N + j] = __float2half(0.f);
  }
}

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t stream) {
  cheat::Gemm g;
  if (!cheat::parse(tensors, n_tensors, &g)) return KILN_ERR_BAD_ARGUMENT;
  if (cheat::launch(g, stream) != KILN_OK) return KILN_ERR_LAUNCH;
  scribble_past_end<<<32, 256, 0, stream>>>(g.c, g.M, g.N);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
