// kiln-sync: arch=sm_80
// kiln-sync: expect=findings
// Warp-aggregated histogram: lanes with the same bin elect a leader with __match_any_sync and
// the leader adds the group size. The match runs inside `if (i < n)` with the full mask, which
// names the tail warp's lanes that skipped the branch.
extern "C" __global__ void histogram_match_full_mask(const unsigned* __restrict__ keys,
                                                     unsigned* __restrict__ hist, int n,
                                                     unsigned bins) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned lane = threadIdx.x % 32;
  if (i < n) {
    const unsigned bin = keys[i] % bins;
    const unsigned peers = __match_any_sync(0xffffffffu, bin);  // expect: collective_mask
    const unsigned leader = __ffs(peers) - 1;
    if (lane == leader) atomicAdd(&hist[bin], __popc(peers));
  }
}
