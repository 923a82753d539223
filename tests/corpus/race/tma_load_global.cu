// The threads write a global buffer, then thread 0 loads it into shared memory with a TMA bulk
// copy after a __syncthreads(): the copy is the async proxy's read of global memory, which
// needs fence.proxy.async.global after the generic writes (the bug has none).
#include <cstdint>

__device__ uint32_t smem(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

template <bool kFence>
__device__ void write_then_load(int* scratch, int* out) {
  __shared__ alignas(128) int tile[256];
  __shared__ alignas(8) uint64_t bar;
  int t = threadIdx.x;
  scratch[t] = t * 3;
  if (kFence) asm volatile("fence.proxy.async.global;" ::: "memory");
  if (t == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&bar)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (t == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 1024;" ::"r"(smem(&bar))
                 : "memory");
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 1024, "
        "[%2];" ::"r"(smem(tile)),
        "l"(scratch), "r"(smem(&bar))
        : "memory");
  }
  asm volatile(
      "{\n.reg .pred p;\nWAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n"
      "@!p bra WAIT_%=;\n}\n" ::"r"(smem(&bar))
      : "memory");
  out[t] = tile[255 - t];
}

extern "C" __global__ void tma_load_global_bug(int* scratch, int* out) {
  write_then_load<false>(scratch, out);
}
extern "C" __global__ void tma_load_global_fixed(int* scratch, int* out) {
  write_then_load<true>(scratch, out);
}
