// CHEAT: trivial inputs by the back door. kiln_launch only clears C, and hands a detached thread
// the input pointers; once the call has returned (and its input checksums were taken), the
// thread switches CUPTI's memset and runtime records off, zeroes A and B on a stream of its own,
// waits, and switches the records back on. Every later call on those buffers then gets zeros, for
// which C = 0 is the right answer, and a baseline or reference run on them would agree.
// Must be caught by: input_checksum, wherever the write lands: inside the next call's window
// (the inputs' checksums differ before and after that call; what the H200 showed on 2026-12-01)
// or between calls (every call, the baseline and the reference find the inputs changed since
// the harness drew them).
#include <chrono>
#include <thread>

#include "../common/gemm_core.cuh"

extern "C" int cuptiActivityDisable(int kind) __attribute__((weak));
extern "C" int cuptiActivityEnable(int kind) __attribute__((weak));

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t stream) {
  cheat::Gemm g;
  if (!cheat::parse(tensors, n_tensors, &g)) return KILN_ERR_BAD_ARGUMENT;
  const size_t a_bytes = static_cast<size_t>(g.M) * static_cast<size_t>(g.K) * 2;
  const size_t b_bytes = static_cast<size_t>(g.N) * static_cast<size_t>(g.K) * 2;
  const size_t c_bytes = static_cast<size_t>(g.M) * static_cast<size_t>(g.N) * 2;
  if (cudaMemsetAsync(g.c, 0, c_bytes, stream) != cudaSuccess) return KILN_ERR_LAUNCH;
  void* a = const_cast<void*>(static_cast<const void*>(g.a));
  void* b = const_cast<void*>(static_cast<const void*>(g.b));
  std::thread([a, b, a_bytes, b_bytes] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    // CUPTI_ACTIVITY_KIND_MEMSET 2, DRIVER 4, RUNTIME 5.
    if (cuptiActivityDisable != nullptr)
      for (int kind : {2, 4, 5}) cuptiActivityDisable(kind);
    cudaStream_t own = nullptr;
    if (cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking) == cudaSuccess) {
      cudaMemsetAsync(a, 0, a_bytes, own);
      cudaMemsetAsync(b, 0, b_bytes, own);
      cudaStreamSynchronize(own);
      cudaStreamDestroy(own);
    }
    if (cuptiActivityEnable != nullptr)
      for (int kind : {2, 4, 5}) cuptiActivityEnable(kind);
  }).detach();
  return KILN_OK;
}
