// kiln-sync: arch=sm_90a
// kiln-sync: expect=clean
// TMA load of a 32x32 float tile (cp.async.bulk.tensor.2d) completing on an mbarrier that every
// thread arrives on (count blockDim.x). The fix: thread 0 arrives with arrive.expect_tx of 4096
// bytes (the others with a plain arrive), so the phase also waits for the tile's bytes.
#include <cstdint>
#include <cuda.h>

extern "C" __global__ void tma_tile_expect_tx(const __grid_constant__ CUtensorMap tmap,
                                              float* __restrict__ y) {
  __shared__ __align__(128) float tile[32 * 32];
  __shared__ uint64_t bar;
  const unsigned tid = threadIdx.x;
  const unsigned bar_addr = static_cast<unsigned>(__cvta_generic_to_shared(&bar));
  const unsigned tile_addr = static_cast<unsigned>(__cvta_generic_to_shared(tile));
  const int x0 = blockIdx.x * 32, y0 = blockIdx.y * 32;
  if (tid == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar_addr), "r"(blockDim.x) : "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  if (tid == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar_addr), "r"(32 * 32 * 4) : "memory");
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" :: "r"(tile_addr), "l"(reinterpret_cast<uint64_t>(&tmap)), "r"(x0), "r"(y0), "r"(bar_addr) : "memory");
  } else {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bar_addr) : "memory");
  }
  asm volatile("{\n .reg .pred p;\n WAIT:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n @!p bra WAIT;\n}" :: "r"(bar_addr) : "memory");
  for (unsigned k = tid; k < 32 * 32; k += blockDim.x) y[(y0 + k / 32) * (gridDim.x * 32) + x0 + k % 32] = tile[k];
}
