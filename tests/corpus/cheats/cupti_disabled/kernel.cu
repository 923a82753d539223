// CHEAT: the profiler switched off. A correct GEMM whose kiln_launch turns off every CUPTI
// activity kind of its process before launching, so none of its work is recorded: no kernel on
// a private stream, no late work, no time. It reaches CUPTI through weak references, resolved
// against the libcupti the harness process already loaded, without naming a banned symbol.
// Must be caught by: activity_record (the harness's own markers around the call go missing).
#include "../common/gemm_core.cuh"

extern "C" int cuptiActivityDisable(int kind) __attribute__((weak));

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t stream) {
  if (cuptiActivityDisable != nullptr) {
    // CUPTI_ACTIVITY_KIND_MEMCPY 1, MEMSET 2, DRIVER 4, RUNTIME 5, CONCURRENT_KERNEL 10.
    for (int kind : {1, 2, 4, 5, 10}) cuptiActivityDisable(kind);
  }
  cheat::Gemm g;
  if (!cheat::parse(tensors, n_tensors, &g)) return KILN_ERR_BAD_ARGUMENT;
  return cheat::launch(g, stream);
}
