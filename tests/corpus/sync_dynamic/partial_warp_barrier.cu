// The first 48 threads fill the tile and call __syncthreads() inside the guard: warp 1 reaches
// the barrier with only half its lanes. The fix keeps the barrier outside the guard.
template <bool kOutside>
__device__ void fill(const int* in, int* out, int n) {
  __shared__ int s[64];
  const int t = threadIdx.x;
  if (t < n) {
    s[t] = in[t];
    if (!kOutside) __syncthreads();
  }
  if (kOutside) __syncthreads();
  if (t < n) out[t] = s[n - 1 - t];
}

extern "C" __global__ void partial_warp_barrier_bug(const int* in, int* out, int n) {
  fill<false>(in, out, n);
}
extern "C" __global__ void partial_warp_barrier_fixed(const int* in, int* out, int n) {
  fill<true>(in, out, n);
}
