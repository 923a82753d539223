// CHEAT: the real kernel hidden from the profiler, a decoy left in view. kiln_launch switches
// off CUPTI's kernel records, launches the whole GEMM on the launch stream, switches them on
// again and launches a decoy that only waits 200 us. The activity record then holds the decoy
// alone, so a sample timed by CUPTI's span is the decoy's 200 us instead of the GEMM's and the
// decoy's together; the harness's own markers are all there (the records are back on before
// the call returns). Under the earlier margin (twice the span plus 100 us) this passed for any
// GEMM shorter than 300 us, the task's starter at 16x4096x4096 (about 255 us) among them.
// Must be caught by: activity_record (the CUDA events on the launch stream, recorded while the
// launch gate still holds the GPU, time far more work than the record shows).
#include "../common/decoy.cuh"
#include "../common/gemm_core.cuh"

extern "C" int cuptiActivityDisable(int kind) __attribute__((weak));
extern "C" int cuptiActivityEnable(int kind) __attribute__((weak));

namespace {

constexpr int kKernelKinds[] = {10};  // CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, as the harness records

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t stream) {
  cheat::Gemm g;
  if (!cheat::parse(tensors, n_tensors, &g)) return KILN_ERR_BAD_ARGUMENT;
  if (cuptiActivityDisable != nullptr)
    for (int kind : kKernelKinds) cuptiActivityDisable(kind);
  const int status = cheat::launch(g, stream);
  if (cuptiActivityEnable != nullptr)
    for (int kind : kKernelKinds) cuptiActivityEnable(kind);
  if (status != KILN_OK) return status;
  cheat::decoy<<<1, 1, 0, stream>>>(200'000);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
