// kiln-sync: arch=sm_80
// kiln-sync: expect=findings
// Count non-zero entries per warp with __reduce_add_sync (redux.sync). The reduction sits inside
// `if (i < n)` with the full mask, so in the tail warp it names lanes that skip it.
extern "C" __global__ void warp_count_nonzero_full_mask(const float* __restrict__ x,
                                                        unsigned* __restrict__ counts, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned c = 0;
  if (i < n) {
    const unsigned nz = x[i] != 0.0f ? 1u : 0u;
    c = __reduce_add_sync(0xffffffffu, nz);  // expect: collective_mask
  }
  if (threadIdx.x % 32 == 0 && i < n) counts[i / 32] = c;
}
