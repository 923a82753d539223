// Distributed shared memory: CTA 0 of a cluster writes into CTA 1's shared memory and CTA 1
// reads it; without cluster.sync() (barrier.cluster) between them the two CTAs are not ordered.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

template <bool kSync>
__device__ void exchange(int* out) {
  __shared__ int s[64];
  cg::cluster_group cluster = cg::this_cluster();
  unsigned rank = cluster.block_rank();
  int t = threadIdx.x;
  if (rank == 0) {
    int* remote = cluster.map_shared_rank(s, 1);
    remote[t] = t + 100;
  }
  if (kSync) cluster.sync();
  if (rank == 1) out[t] = s[t];
  if (kSync) cluster.sync();  // no CTA exits while the other may still use its memory
}

extern "C" __global__ void __cluster_dims__(2, 1, 1) dsmem_cluster_bug(int* out) {
  exchange<false>(out);
}
extern "C" __global__ void __cluster_dims__(2, 1, 1) dsmem_cluster_fixed(int* out) {
  exchange<true>(out);
}
