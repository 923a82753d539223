// CHEAT: constant output. Writes zeros to every element of C: fast, and every element is
// written, so only the values give it away.
// Must be caught by: correctness.
#include "../common/gemm_core.cuh"

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t stream) {
  cheat::Gemm g;
  if (!cheat::parse(tensors, n_tensors, &g)) return KILN_ERR_BAD_ARGUMENT;
  return cudaMemsetAsync(g.c, 0, static_cast<size_t>(g.M * g.N) * sizeof(__half), stream) ==
                 cudaSuccess
             ? KILN_OK
             : KILN_ERR_LAUNCH;
}
