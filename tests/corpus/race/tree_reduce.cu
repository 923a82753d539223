// A shared-memory tree reduction that stops synchronizing once the active threads fit in one
// warp (the pre-Volta "warp-synchronous" idiom): under independent thread scheduling the lanes
// are not in lockstep. Each step needs __syncwarp() twice, since lane t reads the element that
// lane t + stride writes in the same step: once between the reads and the writes, once after.
template <bool kSyncWarp>
__device__ void reduce(const int* in, int* out) {
  __shared__ int s[128];
  int t = threadIdx.x;
  s[t] = in[t];
  __syncthreads();
  for (int stride = 64; stride > 16; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t < 16) {
    for (int stride = 16; stride > 0; stride >>= 1) {
      // Lane t reads the element lane t + stride writes in this step: read, sync, then write.
      int v = s[t + stride];
      if (kSyncWarp) __syncwarp(0xffff);
      s[t] += v;
      if (kSyncWarp) __syncwarp(0xffff);
    }
  }
  if (t == 0) out[0] = s[0];
}

extern "C" __global__ void tree_reduce_bug(const int* in, int* out) { reduce<false>(in, out); }
extern "C" __global__ void tree_reduce_fixed(const int* in, int* out) { reduce<true>(in, out); }
