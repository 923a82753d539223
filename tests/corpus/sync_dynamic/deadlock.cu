// Warp 0 waits at named barrier 1 for both warps, but warp 1 goes to named barrier 2: every
// warp waits and none can go on. The fix has both warps use barrier 1.
template <bool kSameBarrier>
__device__ void handoff(int* out) {
  __shared__ int s[64];
  const int t = threadIdx.x;
  s[t] = t;
  if (t < 32 || kSameBarrier) {
    asm volatile("bar.sync 1, 64;" ::: "memory");
  } else {
    asm volatile("bar.sync 2, 64;" ::: "memory");
  }
  out[t] = s[63 - t];
}

extern "C" __global__ void deadlock_bug(int* out) { handoff<false>(out); }
extern "C" __global__ void deadlock_fixed(int* out) { handoff<true>(out); }
