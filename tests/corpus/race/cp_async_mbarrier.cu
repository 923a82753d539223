// cp.async completing on an mbarrier (cp.async.mbarrier.arrive.noinc): the bug uses a plain
// __syncthreads() instead of waiting for the barrier's phase, which does not wait for the copies.
__device__ unsigned smem(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

template <bool kWait>
__device__ void copy_then_read(const int* in, int* out) {
  __shared__ int s[64];
  __shared__ unsigned long long bar;
  int t = threadIdx.x;
  if (t == 0) asm volatile("mbarrier.init.shared.b64 [%0], 64;" ::"r"(smem(&bar)) : "memory");
  __syncthreads();
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(smem(&s[t])), "l"(&in[t])
               : "memory");
  asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" ::"r"(smem(&bar)) : "memory");
  if (kWait) {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "WAIT_%=:\n"
        "mbarrier.try_wait.parity.shared.b64 p, [%0], 0;\n"
        "@!p bra WAIT_%=;\n"
        "}\n" ::"r"(smem(&bar))
        : "memory");
  } else {
    __syncthreads();
  }
  out[t] = s[63 - t];
}

extern "C" __global__ void cp_async_mbarrier_bug(const int* in, int* out) {
  copy_then_read<false>(in, out);
}
extern "C" __global__ void cp_async_mbarrier_fixed(const int* in, int* out) {
  copy_then_read<true>(in, out);
}
