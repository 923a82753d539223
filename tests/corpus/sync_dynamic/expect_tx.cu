// The producer announces 512 transaction bytes but copies only 256: the phase never completes
// and the consumers wait forever. The fix announces what it copies.
#include "mbarrier_ops.h"

template <unsigned kAnnounced>
__device__ void load_then_read(const int* in, int* out) {
  __shared__ alignas(16) int buffer[64];
  __shared__ unsigned long long bar;
  if (threadIdx.x == 0) {
    mbar_init(&bar, 1);
    init_fence();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    mbar_arrive_expect_tx(&bar, kAnnounced);
    bulk_load(buffer, in, 256, &bar);
  }
  mbar_wait(&bar, 0);
  out[threadIdx.x] = buffer[63 - threadIdx.x];
}

extern "C" __global__ void expect_tx_bug(const int* in, int* out) { load_then_read<512>(in, out); }
extern "C" __global__ void expect_tx_fixed(const int* in, int* out) {
  load_then_read<256>(in, out);
}

// tx_overflow_bug announces 128 bytes for the same 256-byte copy: the phase completes with 128
// bytes that belong to no phase (tx-count underflow; on the GPU they corrupt the next phase's
// count). Its fix announces the 256.
extern "C" __global__ void tx_overflow_bug(const int* in, int* out) { load_then_read<128>(in, out); }
extern "C" __global__ void tx_overflow_fixed(const int* in, int* out) {
  load_then_read<256>(in, out);
}
