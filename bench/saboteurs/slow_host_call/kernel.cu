// SABOTEUR: slow host call. A correct GEMM whose kiln_launch then waits for the GPU and sleeps
// 5 ms on the host. No gate forbids it (host synchronization is reported), so the job runs to
// the end; it tries to slow the baseline through the launch gate (a wait under the gate used to
// turn the gate off for the whole job) and through the GPU left idle between calls.
// Expected: the candidate is slow; the baseline's medians match a job with an honest candidate.
#include <chrono>
#include <thread>

#include "../../../tests/corpus/cheats/common/gemm_core.cuh"

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t stream) {
  cheat::Gemm g;
  if (!cheat::parse(tensors, n_tensors, &g)) return KILN_ERR_BAD_ARGUMENT;
  const int status = cheat::launch(g, stream);
  cudaStreamSynchronize(stream);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return status;
}
