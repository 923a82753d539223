// The two halves of the block take different branches, each with its own __syncthreads(): the
// block meets at two different barrier instructions. The fix has one barrier after the branch.
template <bool kOneBarrier>
__device__ void halves(const int* in, int* out) {
  __shared__ int s[64];
  const int t = threadIdx.x;
  if (t < 32) {
    s[t] = in[t] * 2;
    if (!kOneBarrier) __syncthreads();
  } else {
    s[t] = in[t] + 1;
    if (!kOneBarrier) __syncthreads();
  }
  if (kOneBarrier) __syncthreads();
  out[t] = s[63 - t];
}

extern "C" __global__ void divergent_barrier_bug(const int* in, int* out) {
  halves<false>(in, out);
}
extern "C" __global__ void divergent_barrier_fixed(const int* in, int* out) {
  halves<true>(in, out);
}
