// Two warps meet at named barrier 1, but warp 1 gives it a thread count of 32 where warp 0
// gives 64: the barrier completes with more threads than its count (or leaves warp 0 waiting).
template <bool kSameCount>
__device__ void meet(int* out) {
  __shared__ int s[64];
  const int t = threadIdx.x;
  s[t] = t;
  if (t < 32 || kSameCount) {
    asm volatile("bar.sync 1, 64;" ::: "memory");
  } else {
    asm volatile("bar.sync 1, 32;" ::: "memory");
  }
  out[t] = s[63 - t];
}

extern "C" __global__ void named_barrier_count_bug(int* out) { meet<false>(out); }
extern "C" __global__ void named_barrier_count_fixed(int* out) { meet<true>(out); }
