// kiln-sync: arch=sm_80
// kiln-sync: expect=clean
// blockDim.x == 128: warps 0-2 difference 80 staged rows and sync among themselves on named
// barrier 1 while warp 3 copies a side buffer. The fix: the barrier count is kRows rounded up
// to whole warps, 96: the three warps that execute it (a multiple of 32).
extern "C" __global__ void rows80_barrier_count_96(const float* __restrict__ x,
                                                   float* __restrict__ y,
                                                   const float* __restrict__ side_in,
                                                   float* __restrict__ side_out) {
  constexpr unsigned kRows = 80;  // rows staged per block, one per thread
  __shared__ float rows[kRows];
  const unsigned tid = threadIdx.x;
  if (tid < 96) {  // warps 0-2
    if (tid < kRows) rows[tid] = x[blockIdx.x * kRows + tid];
    asm volatile("bar.sync 1, %0;" :: "r"((kRows + 31) / 32 * 32) : "memory");
    if (tid < kRows) y[blockIdx.x * kRows + tid] = rows[tid] - rows[(tid + 1) % kRows];
  } else {  // warp 3: independent copy
    side_out[blockIdx.x * 32 + (tid - 96)] = side_in[blockIdx.x * 32 + (tid - 96)];
  }
}
