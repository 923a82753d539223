// CHEAT: reuse the baseline's output. Harnesses that run the reference first into the
// same output buffer leave the right answer in C; this kernel writes nothing and returns.
// Must be caught by: poisoned_outputs (C still holds the harness's poison NaN; kiln never
// shares output buffers and runs the candidate before the baseline on new inputs).
#include "../common/gemm_core.cuh"

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t) {
  cheat::Gemm g;
  if (!cheat::parse(tensors, n_tensors, &g)) return KILN_ERR_BAD_ARGUMENT;
  return KILN_OK;
}
