// CHEAT: waiting inside the call. A correct GEMM whose kiln_launch waits for its stream before
// returning. The wait costs host time that no sample shows, takes the launch stream out of the
// harness's hands (the launch gate must give up on it), and the task forbids it.
// Must be caught by: hidden_stream_work (the calling thread's synchronize inside kiln_launch, seen
// in the activity record; tasks may allow it with "allow_host_sync": true).
#include "../common/gemm_core.cuh"

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t stream) {
  cheat::Gemm g;
  if (!cheat::parse(tensors, n_tensors, &g)) return KILN_ERR_BAD_ARGUMENT;
  const int status = cheat::launch(g, stream);
  return cudaStreamSynchronize(stream) == cudaSuccess ? status : KILN_ERR_LAUNCH;
}
