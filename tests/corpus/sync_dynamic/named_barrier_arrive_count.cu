// A producer warp signals named barrier 1 with bar.arrive and a thread count of 64, while the
// two consumer warps wait on it with bar.sync and 96. Barrier 2 makes the producer arrive
// first under every schedule, so barrier 1 then completes with 96 threads at the consumers'
// count of 96: the check at completion sees nothing wrong, only the arrival with the other
// count shows the mismatch. The fix gives bar.arrive the consumers' count.
template <int kProducerCount>
__device__ void signal(int* out) {
  __shared__ int s[32];
  const int t = threadIdx.x;
  if (t >= 64) {  // warp 2: the producer
    s[t - 64] = t;
    if constexpr (kProducerCount == 64) {
      asm volatile("bar.arrive 1, 64;" ::: "memory");
    } else {
      asm volatile("bar.arrive 1, 96;" ::: "memory");
    }
    asm volatile("bar.arrive 2, 96;" ::: "memory");
  } else {  // warps 0 and 1: the consumers
    asm volatile("bar.sync 2, 96;" ::: "memory");
    asm volatile("bar.sync 1, 96;" ::: "memory");
    out[t] = s[t % 32];
  }
}

extern "C" __global__ void named_barrier_arrive_count_bug(int* out) { signal<64>(out); }
extern "C" __global__ void named_barrier_arrive_count_fixed(int* out) { signal<96>(out); }
