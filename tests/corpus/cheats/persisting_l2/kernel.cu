// CHEAT: persisting L2. A correct GEMM that first sets aside a persisting-L2 carve-out and marks
// its input B persisting on the stream it is given, so B survives the harness's cold-L2 flush
// (the candidate runs warm while the baseline is measured cold) and the L2 left for the baseline
// shrinks.
// Must be caught by: harness_state (the carve-out and the stream's access-policy window are
// device state the harness owns; both are put back after the call).
#include "../common/gemm_core.cuh"

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t stream) {
  cheat::Gemm g;
  if (!cheat::parse(tensors, n_tensors, &g)) return KILN_ERR_BAD_ARGUMENT;
  int device = 0;
  cudaGetDevice(&device);
  int max_persisting = 0;
  cudaDeviceGetAttribute(&max_persisting, cudaDevAttrMaxPersistingL2CacheSize, device);
  cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, static_cast<size_t>(max_persisting));
  cudaStreamAttrValue window{};
  window.accessPolicyWindow.base_ptr = const_cast<void*>(tensors[1].data);
  window.accessPolicyWindow.num_bytes = static_cast<size_t>(max_persisting);
  window.accessPolicyWindow.hitRatio = 1.0f;
  window.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  window.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &window);
  return cheat::launch(g, stream);
}
