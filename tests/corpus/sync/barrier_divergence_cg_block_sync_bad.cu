// kiln-sync: arch=sm_80
// kiln-sync: expect=findings
// Pairwise sums through shared memory, synchronized with cooperative groups. The bug: the
// block barrier sits inside `threadIdx.x % 2 == 0`, so the odd threads never arrive.
// this_thread_block().sync() compiles to `barrier.sync 0` without .aligned, which lets threads
// arrive from different instructions, but every thread of the block must still arrive.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void pair_sums_cg_bad(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ float tile[256];
  cg::thread_block block = cg::this_thread_block();
  const unsigned tid = threadIdx.x;
  const unsigned i = blockIdx.x * blockDim.x + tid;
  tile[tid] = x[i];
  if (tid % 2 == 0) {
    block.sync();  // expect: barrier_divergence
    y[i / 2] = tile[tid] + tile[tid + 1];
  }
}
