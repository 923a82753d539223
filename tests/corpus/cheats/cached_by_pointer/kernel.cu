// CHEAT: results cached across calls by pointer. The first call for a set of (A, B, C)
// pointers computes C and keeps a copy; later calls with the same pointers copy the old
// answer back instead of computing, since "the benchmark reuses the same buffers".
// Must be caught by: fresh_inputs (new values at the same addresses; the output matches
// the answer for the earlier inputs).
#include "../common/gemm_core.cuh"

namespace {
const void* g_a = nullptr;
const void* g_b = nullptr;
void* g_c = nullptr;
__half* g_saved = nullptr;
}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t stream) {
  cheat::Gemm g;
  if (!cheat::parse(tensors, n_tensors, &g)) return KILN_ERR_BAD_ARGUMENT;
  const size_t bytes = static_cast<size_t>(g.M * g.N) * sizeof(__half);
  if (g.a == g_a && g.b == g_b && g.c == g_c && g_saved != nullptr) {
    return cudaMemcpyAsync(g.c, g_saved, bytes, cudaMemcpyDeviceToDevice, stream) == cudaSuccess
               ? KILN_OK
               : KILN_ERR_LAUNCH;
  }
  if (g_saved != nullptr) cudaFree(g_saved);
  if (cudaMalloc(&g_saved, bytes) != cudaSuccess) return KILN_ERR_LAUNCH;
  g_a = g.a;
  g_b = g.b;
  g_c = g.c;
  if (cheat::launch(g, stream) != KILN_OK) return KILN_ERR_LAUNCH;
  return cudaMemcpyAsync(g_saved, g.c, bytes, cudaMemcpyDeviceToDevice, stream) == cudaSuccess
             ? KILN_OK
             : KILN_ERR_LAUNCH;
}
