// CHEAT: the legacy default stream. The GEMM is launched on stream 0 instead of the given
// (non-blocking) stream, so it is not ordered with the caller's work and escapes its events.
// Must be caught by: hidden_stream_work.
#include "../common/gemm_core.cuh"

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t) {
  cheat::Gemm g;
  if (!cheat::parse(tensors, n_tensors, &g)) return KILN_ERR_BAD_ARGUMENT;
  return cheat::launch(g, nullptr);
}
