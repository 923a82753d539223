// kiln-sync: arch=sm_90a
// kiln-sync: expect=clean
// Two-phase sum under a cooperative launch: every block writes its partial sum, the grid
// synchronizes, then block 0 adds the partials. The fix: every block calls grid.sync(); only
// the final sum is under blockIdx.x == 0.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void grid_sum_good(const float* __restrict__ x, float* partial,
                                         float* __restrict__ out) {
  cg::grid_group grid = cg::this_grid();
  __shared__ float s[256];
  const unsigned tid = threadIdx.x;
  s[tid] = x[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid == 0) partial[blockIdx.x] = s[0];
  grid.sync();
  if (blockIdx.x == 0 && tid == 0) {
    float total = 0.0f;
    for (unsigned b = 0; b < gridDim.x; ++b) total += partial[b];
    *out = total;
  }
}
