// CHEAT: inputs overwritten. After computing C, the kernel reuses A's first row as
// scratch (here: zeroes it), which would corrupt the caller's data in a real model.
// Must be caught by: input_checksum.
#include "../common/gemm_core.cuh"

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t stream) {
  cheat::Gemm g;
  if (!cheat::parse(tensors, n_tensors, &g)) return KILN_ERR_BAD_ARGUMENT;
  if (cheat::launch(g, stream) != KILN_OK) return KILN_ERR_LAUNCH;
  return cudaMemsetAsync(const_cast<__half*>(g.a), 0, static_cast<size_t>(g.K) * sizeof(__half),
                         stream) == cudaSuccess
             ? KILN_OK
             : KILN_ERR_LAUNCH;
}
