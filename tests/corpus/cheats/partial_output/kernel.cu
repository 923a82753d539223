// CHEAT: partial output. Computes only the first half of C's rows (half the work),
// betting that a checker samples a few elements near the start.
// Must be caught by: poisoned_outputs (the other half still holds the poison NaN).
#include "../common/gemm_core.cuh"

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t stream) {
  cheat::Gemm g;
  if (!cheat::parse(tensors, n_tensors, &g)) return KILN_ERR_BAD_ARGUMENT;
  return cheat::launch(g, stream, g.M / 2);
}
