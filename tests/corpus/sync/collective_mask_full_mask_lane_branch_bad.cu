// kiln-sync: arch=sm_80
// kiln-sync: expect=findings
// Row max over rows of 16 floats, one warp (one block of 32 threads) per row: only lanes 0-15
// hold an element. The xor butterfly runs inside `if (lane < 16)` with the full mask 0xffffffff,
// which names lanes 16-31 that never execute the shuffle.
extern "C" __global__ void row16_max_full_mask(const float* __restrict__ x,
                                               float* __restrict__ row_max) {
  const unsigned lane = threadIdx.x % 32;
  const unsigned row = blockIdx.x;
  if (lane < 16) {
    float v = x[row * 16 + lane];
#pragma unroll
    for (int off = 8; off > 0; off >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));  // expect: collective_mask
    if (lane == 0) row_max[row] = v;
  }
}
