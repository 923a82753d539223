// Threads past n return before a __syncthreads() the others still reach, so the barrier does
// not synchronize the whole block. The fix guards the work instead of returning.
template <bool kGuard>
__device__ void scale(const int* in, int* out, int n) {
  __shared__ int s[64];
  const int t = threadIdx.x;
  if (!kGuard && t >= n) return;
  if (t < n) s[t] = in[t];
  __syncthreads();
  if (t < n) out[t] = s[n - 1 - t];
}

extern "C" __global__ void early_exit_bug(const int* in, int* out, int n) {
  scale<false>(in, out, n);
}
extern "C" __global__ void early_exit_fixed(const int* in, int* out, int n) {
  scale<true>(in, out, n);
}
