// kiln-sync: arch=sm_80
// kiln-sync: expect=clean
// Pairwise sums through shared memory, synchronized with cooperative groups. The fix: every
// thread of the block calls this_thread_block().sync(); only the sum is under the condition.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void pair_sums_cg_good(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ float tile[256];
  cg::thread_block block = cg::this_thread_block();
  const unsigned tid = threadIdx.x;
  const unsigned i = blockIdx.x * blockDim.x + tid;
  tile[tid] = x[i];
  block.sync();
  if (tid % 2 == 0) {
    y[i / 2] = tile[tid] + tile[tid + 1];
  }
}
