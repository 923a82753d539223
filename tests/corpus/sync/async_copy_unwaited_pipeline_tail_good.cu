// kiln-sync: arch=sm_80
// kiln-sync: expect=clean
// Double-buffered cp.async pipeline over ntiles (>= 1) tiles of 256 floats. The fix: a group is
// committed on every iteration (empty on the last), so cp.async.wait_group 1 always leaves only
// the next tile in flight and the current tile has landed.
extern "C" __global__ void tile_sum_pipeline_commit_always(const float* __restrict__ x,
                                                           float* __restrict__ y, int ntiles) {
  __shared__ __align__(16) float stage[2][256];
  const unsigned tid = threadIdx.x;  // blockDim.x == 256
  const float* src = x + static_cast<size_t>(blockIdx.x) * ntiles * 256 + tid;
  const unsigned dst0 = static_cast<unsigned>(__cvta_generic_to_shared(&stage[0][tid]));
  const unsigned dst1 = static_cast<unsigned>(__cvta_generic_to_shared(&stage[1][tid]));
  float acc = 0.0f;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(dst0), "l"(src) : "memory");
  asm volatile("cp.async.commit_group;" ::: "memory");
#pragma unroll 1  // keep one loop body in the PTX
  for (int t = 0; t < ntiles; ++t) {
    if (t + 1 < ntiles) {
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"((t & 1) ? dst0 : dst1), "l"(src + (t + 1) * 256) : "memory");
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_group 1;" ::: "memory");
    __syncthreads();
    acc += stage[t & 1][(tid + 1) % 256];
    __syncthreads();
  }
  y[blockIdx.x * 256 + tid] = acc;
}
