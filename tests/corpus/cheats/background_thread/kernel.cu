// CHEAT: background host thread. kiln_launch returns immediately; a detached thread
// enqueues the GEMM a moment later, hoping the timer has already stopped.
// Must be caught by: hidden_stream_work (CUDA calls from a thread other than the caller,
// and GPU work after the call's window).
#include <chrono>
#include <thread>

#include "../common/gemm_core.cuh"

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t stream) {
  cheat::Gemm g;
  if (!cheat::parse(tensors, n_tensors, &g)) return KILN_ERR_BAD_ARGUMENT;
  std::thread([g, stream] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    cheat::launch(g, stream);
  }).detach();
  return KILN_OK;
}
