// CHEAT (or bug): reading uninitialized memory. Split-K partial sums are added with
// atomics into an fp32 scratch buffer that is allocated once and never cleared, so the
// result depends on whatever the scratch held (and grows from call to call).
// Must be caught by: correctness (and compute-sanitizer initcheck in a sanitize job).
#include "../common/gemm_core.cuh"

namespace {

constexpr int kSplits = 4;

__global__ void split_k_partial(const __half* a, const __half* b, float* acc, int64_t M, int64_t N,
                                int64_t K) {
  const int64_t idx = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (idx >= M * N) return;
  const int64_t i = idx / N;
  const int64_t j = idx % N;
  const int64_t chunk = (K + kSplits - 1) / kSplits;
  const int64_t k0 = blockIdx.y * chunk;
  const int64_t k1 = k0 + chunk < K ? k0 + chunk : K;
  float sum = 0.f;
  for (int64_t k = k0; k < k1; ++k) sum += __half2float(a[i * K + k]) * __half2float(b[j * K + k]);
  atomicAdd(&acc[idx], sum);  // acc was never zeroed
}

__global__ void to_half(const float* acc, __half* c, int64_t n) {
  const int64_t idx = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (idx < n) c[idx] = __float2half_rn(acc[idx]);
}

float* g_scratch = nullptr;
size_t g_scratch_bytes = 0;

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t stream) {
  cheat::Gemm g;
  if (!cheat::parse(tensors, n_tensors, &g)) return KILN_ERR_BAD_ARGUMENT;
  const size_t bytes = static_cast<size_t>(g.M * g.N) * sizeof(float);
  if (bytes > g_scratch_bytes) {
    if (g_scratch != nullptr) cudaFree(g_scratch);
    if (cudaMalloc(&g_scratch, bytes) != cudaSuccess) return KILN_ERR_LAUNCH;
    g_scratch_bytes = bytes;
  }
  const int64_t n = g.M * g.N;
  const dim3 grid(static_cast<unsigned>((n + 255) / 256), kSplits);
  split_k_partial<<<grid, 256, 0, stream>>>(g.a, g.b, g_scratch, g.M, g.N, g.K);
  to_half<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(g_scratch, g.c, n);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
