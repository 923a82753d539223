// CHEAT: the real work on a private stream nobody waits for, hidden from the profiler, and a
// short decoy on the launch stream. kiln_launch switches off CUPTI's kernel, runtime and driver
// records, launches the whole GEMM on a non-blocking stream of its own, switches them on again
// and puts a 40 us decoy on the launch stream. Nothing in the record shows the private stream,
// and the events on the launch stream see only the decoy, so the sample is 40 us; the output is
// complete when the harness reads it (the harness synchronizes the device first). With a launch
// gate of one thread the GEMM even ran while kiln_launch was still being called.
// Must be caught by: hidden_stream_work (the launch gate fills the GPU while kiln_launch runs,
// so the GEMM starts only after the gate, and the tail probe behind the call's stop event waits
// until the GEMM is done: the GPU was busy long after the launch stream was).
#include "../common/decoy.cuh"
#include "../common/gemm_core.cuh"

extern "C" int cuptiActivityDisable(int kind) __attribute__((weak));
extern "C" int cuptiActivityEnable(int kind) __attribute__((weak));

namespace {

// CUPTI_ACTIVITY_KIND_DRIVER, _RUNTIME, _CONCURRENT_KERNEL. Not _KERNEL (3): enabling that
// kind serializes every kernel, which would put the GEMM back inside the decoy's events.
constexpr int kKinds[] = {4, 5, 10};

cudaStream_t private_stream() {
  static cudaStream_t s = [] {
    cudaStream_t created = nullptr;
    cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking);
    return created;
  }();
  return s;
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t stream) {
  cheat::Gemm g;
  if (!cheat::parse(tensors, n_tensors, &g)) return KILN_ERR_BAD_ARGUMENT;
  cudaStream_t hidden = private_stream();
  if (hidden == nullptr) return KILN_ERR_LAUNCH;
  if (cuptiActivityDisable != nullptr)
    for (int kind : kKinds) cuptiActivityDisable(kind);
  const int status = cheat::launch(g, hidden);
  if (cuptiActivityEnable != nullptr)
    for (int kind : kKinds) cuptiActivityEnable(kind);
  if (status != KILN_OK) return status;
  cheat::decoy<<<1, 1, 0, stream>>>(40'000);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
