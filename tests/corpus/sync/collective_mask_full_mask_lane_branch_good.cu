// kiln-sync: arch=sm_80
// kiln-sync: expect=clean
// Row max over rows of 16 floats, one warp (one block of 32 threads) per row: only lanes 0-15
// hold an element. The fix: the butterfly inside `if (lane < 16)` uses the mask 0x0000ffff,
// exactly the lanes that execute it (xor offsets 8..1 stay inside lanes 0-15).
extern "C" __global__ void row16_max_half_mask(const float* __restrict__ x,
                                               float* __restrict__ row_max) {
  const unsigned lane = threadIdx.x % 32;
  const unsigned row = blockIdx.x;
  if (lane < 16) {
    float v = x[row * 16 + lane];
#pragma unroll
    for (int off = 8; off > 0; off >>= 1) v = fmaxf(v, __shfl_xor_sync(0x0000ffffu, v, off));
    if (lane == 0) row_max[row] = v;
  }
}
