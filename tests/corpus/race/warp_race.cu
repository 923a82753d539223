// Lanes of one warp exchange values through shared memory without __syncwarp(): under
// independent thread scheduling the lanes are not in lockstep.
extern "C" __global__ void warp_race_bug(int* out) {
  __shared__ int s[32];
  int lane = threadIdx.x;
  s[lane] = lane * 7;
  out[lane] = s[lane ^ 1];
}

extern "C" __global__ void warp_race_fixed(int* out) {
  __shared__ int s[32];
  int lane = threadIdx.x;
  s[lane] = lane * 7;
  __syncwarp();
  out[lane] = s[lane ^ 1];
}
