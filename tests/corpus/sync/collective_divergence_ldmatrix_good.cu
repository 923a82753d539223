// kiln-sync: arch=sm_80
// kiln-sync: expect=clean
// One warp per block loads a 16x8 f16 tile into mma fragments with ldmatrix.x2. The fix: all 32
// lanes execute the ldmatrix; lanes 16-31 pass a valid (ignored) address, lane % 16's row.
#include <cuda_fp16.h>

extern "C" __global__ void ldmatrix_x2_all_lanes(const __half* __restrict__ a,
                                                 unsigned* __restrict__ frag) {
  __shared__ __align__(16) __half tile[16 * 8];
  const unsigned lane = threadIdx.x % 32;
  for (unsigned j = lane; j < 16 * 8; j += 32) tile[j] = a[blockIdx.x * 16 * 8 + j];
  __syncwarp();
  unsigned r0 = 0, r1 = 0;
  {
    const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(&tile[(lane % 16) * 8]));
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(addr));
  }
  frag[(blockIdx.x * 32 + lane) * 2 + 0] = r0;
  frag[(blockIdx.x * 32 + lane) * 2 + 1] = r1;
}
