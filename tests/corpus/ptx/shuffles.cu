// Warp-level primitives: shuffles, votes, match, reduce. Corpus for the PTX front end.
#include <cuda_runtime.h>

__global__ void warp_reduce(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? in[i] : 0.f;
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  float up = __shfl_up_sync(0xffffffffu, v, 1);
  float down = __shfl_down_sync(0xffffffffu, v, 2);
  float lane0 = __shfl_sync(0xffffffffu, v, 0);
  unsigned ballot = __ballot_sync(0xffffffffu, v > 0.f);
  int any = __any_sync(0xffffffffu, v < 0.f);
  int all = __all_sync(0xffffffffu, v == 0.f);
  unsigned active = __activemask();
  if ((threadIdx.x & 31) == 0) out[i / 32] = v + up + down + lane0 + __popc(ballot) + any + all + active;
}

__global__ void warp_match(const int* keys, int* out) {
  int lane = threadIdx.x % 32;
  int key = keys[threadIdx.x];
  unsigned peers = __match_any_sync(0xffffffffu, key);
  int leader = __ffs(peers) - 1;
  int sum = __reduce_add_sync(0xffffffffu, key);
  unsigned mx = __reduce_max_sync(0xffffffffu, static_cast<unsigned>(key));
  if (lane == leader) out[threadIdx.x] = sum + static_cast<int>(mx);
}
