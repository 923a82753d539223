// Thread block clusters: distributed shared memory and cluster barriers (sm_90).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void __cluster_dims__(2, 1, 1) cluster_exchange(int* out) {
  __shared__ int value;
  cg::cluster_group cluster = cg::this_cluster();
  unsigned rank = cluster.block_rank();
  if (threadIdx.x == 0) value = static_cast<int>(rank) * 100;
  cluster.sync();
  int* peer = cluster.map_shared_rank(&value, rank ^ 1);
  int got = *peer;
  cluster.sync();
  unsigned ctarank;
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(ctarank));
  if (threadIdx.x == 0) out[blockIdx.x] = got + static_cast<int>(ctarank) + static_cast<int>(cluster.num_blocks());
}

__global__ void plain_cluster(int* out) {
  unsigned nc;
  asm("mov.u32 %0, %%nclusterid.x;" : "=r"(nc));
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  out[threadIdx.x] = static_cast<int>(nc);
}
