// CHEAT: lower precision than allowed. Products are accumulated in fp16 (twice the
// tensor-core rate on many GPUs) although the task requires fp32 accumulation.
// Must be caught by: correctness (the error grows with K far beyond atol + rtol*|ref|).
#include "../common/gemm_core.cuh"

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t stream) {
  cheat::Gemm g;
  if (!cheat::parse(tensors, n_tensors, &g)) return KILN_ERR_BAD_ARGUMENT;
  return cheat::launch<__half>(g, stream);
}
