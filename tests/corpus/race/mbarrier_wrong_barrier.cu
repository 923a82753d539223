// mbarrier producer/consumer: warp 1 writes a buffer and arrives on `full`; warp 0 reads it once
// the phase completes. Warp 0 also arrives on `done`, and the bug waits on that barrier (which
// its own arrivals complete) instead of `full`, so nothing orders the producer's writes before
// the reads.
__device__ void mbar_init(unsigned long long* bar, unsigned count) {
  unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(bar));
  asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(a), "r"(count) : "memory");
}
__device__ void mbar_arrive(unsigned long long* bar) {
  unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(bar));
  asm volatile("mbarrier.arrive.shared.b64 _, [%0];" ::"r"(a) : "memory");
}
__device__ void mbar_wait(unsigned long long* bar, unsigned parity) {
  unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(bar));
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared.b64 p, [%0], %1;\n"
      "@!p bra WAIT_%=;\n"
      "}\n" ::"r"(a),
      "r"(parity)
      : "memory");
}

template <bool kRightBarrier>
__device__ void producer_consumer(int* out) {
  __shared__ unsigned long long full, done;
  __shared__ int buffer[32];
  int t = threadIdx.x;
  if (t == 0) {
    mbar_init(&full, 32);
    mbar_init(&done, 32);
  }
  __syncthreads();
  if (t >= 32) {
    buffer[t - 32] = t * 5;
    mbar_arrive(&full);
  } else {
    mbar_arrive(&done);
    mbar_wait(kRightBarrier ? &full : &done, 0);
    out[t] = buffer[31 - t];
  }
}

extern "C" __global__ void mbarrier_wrong_barrier_bug(int* out) { producer_consumer<false>(out); }
extern "C" __global__ void mbarrier_wrong_barrier_fixed(int* out) { producer_consumer<true>(out); }
