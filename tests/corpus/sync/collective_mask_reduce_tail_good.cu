// kiln-sync: arch=sm_80
// kiln-sync: expect=clean
// Count non-zero entries per warp with __reduce_add_sync (redux.sync). The fix: the member mask
// is computed with __ballot_sync(0xffffffff, i < n) before the branch, so it names exactly the
// lanes that execute the reduction.
extern "C" __global__ void warp_count_nonzero_ballot_mask(const float* __restrict__ x,
                                                          unsigned* __restrict__ counts, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned valid = __ballot_sync(0xffffffffu, i < n);
  unsigned c = 0;
  if (i < n) {
    const unsigned nz = x[i] != 0.0f ? 1u : 0u;
    c = __reduce_add_sync(valid, nz);
  }
  if (threadIdx.x % 32 == 0 && i < n) counts[i / 32] = c;
}
