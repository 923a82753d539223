// A TMA bulk copy (cp.async.bulk) into shared memory completes on an mbarrier; the bug reads the
// buffer without waiting for the phase the copy's bytes complete.
__device__ unsigned smem(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

template <bool kWait>
__device__ void bulk_then_read(const int* in, int* out) {
  __shared__ alignas(16) int buffer[64];
  __shared__ unsigned long long bar;
  int t = threadIdx.x;
  if (t == 0) {
    asm volatile("mbarrier.init.shared.b64 [%0], 1;" ::"r"(smem(&bar)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (t == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], 256;" ::"r"(smem(&bar)) : "memory");
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 256, "
        "[%2];" ::"r"(smem(buffer)),
        "l"(in), "r"(smem(&bar))
        : "memory");
  }
  if (kWait) {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "WAIT_%=:\n"
        "mbarrier.try_wait.parity.shared.b64 p, [%0], 0;\n"
        "@!p bra WAIT_%=;\n"
        "}\n" ::"r"(smem(&bar))
        : "memory");
  }
  out[t] = buffer[63 - t];
}

extern "C" __global__ void bulk_copy_wait_bug(const int* in, int* out) {
  bulk_then_read<false>(in, out);
}
extern "C" __global__ void bulk_copy_wait_fixed(const int* in, int* out) {
  bulk_then_read<true>(in, out);
}
