// kiln-sync: arch=sm_80
// kiln-sync: expect=clean
// Warp-aggregated histogram: lanes with the same bin elect a leader with __match_any_sync and
// the leader adds the group size. The fix: the match uses __activemask(), the lanes that are
// actually in the branch, instead of the full mask.
extern "C" __global__ void histogram_match_active_mask(const unsigned* __restrict__ keys,
                                                       unsigned* __restrict__ hist, int n,
                                                       unsigned bins) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned lane = threadIdx.x % 32;
  if (i < n) {
    const unsigned bin = keys[i] % bins;
    const unsigned peers = __match_any_sync(__activemask(), bin);
    const unsigned leader = __ffs(peers) - 1;
    if (lane == leader) atomicAdd(&hist[bin], __popc(peers));
  }
}
