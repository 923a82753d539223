#include <algorithm>

#include "harness_kernels.h"
#include "kiln/tasks/element_check.h"
#include "kiln/tasks/hash_mix.h"
#include "kiln/tasks/numeric_codec.h"

namespace kiln::worker {

namespace {

constexpr int kThreads = 256;
constexpr int kGateThreads = 1024;  // the hold and the tail probe: the most a block may have

unsigned blocks_for(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(blocks, 132 * 16)));
}

__device__ uint64_t load_element(const void* data, int64_t i, int size) {
  switch (size) {
    case 1:
      return static_cast<const uint8_t*>(data)[i];
    case 2:
      return static_cast<const uint16_t*>(data)[i];
    case 4:
      return static_cast<const uint32_t*>(data)[i];
    default:
      return static_cast<const uint64_t*>(data)[i];
  }
}

__device__ void store_element(void* data, int64_t i, int size, uint64_t bits) {
  switch (size) {
    case 1:
      static_cast<uint8_t*>(data)[i] = static_cast<uint8_t>(bits);
      break;
    case 2:
      static_cast<uint16_t*>(data)[i] = static_cast<uint16_t>(bits);
      break;
    case 4:
      static_cast<uint32_t*>(data)[i] = static_cast<uint32_t>(bits);
      break;
    default:
      static_cast<uint64_t*>(data)[i] = bits;
      break;
  }
}

__device__ unsigned long long warp_sum(unsigned long long v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ unsigned long long warp_max(unsigned long long v) {
  for (int offset = 16; offset > 0; offset >>= 1)
    v = max(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

__device__ unsigned long long warp_min(unsigned long long v) {
  for (int offset = 16; offset > 0; offset >>= 1)
    v = min(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

__global__ void kiln_harness_draw_uniform(void* data, int64_t n, kiln_dtype dtype, double low,
                                          double high, uint64_t key) {
  const int size = tasks::dtype_size(dtype);
  const bool integer = !tasks::dtype_is_float(dtype);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    double x = low + (high - low) * tasks::unit_draw(key, static_cast<uint64_t>(i));
    if (integer && x >= high) x = high - 1;
    store_element(data, i, size, tasks::encode(dtype, x));
  }
}

__global__ void kiln_harness_fill_pattern(void* data, int64_t n, int size, uint64_t pattern) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    store_element(data, i, size, pattern);
  }
}

__global__ void kiln_harness_fill_guard(unsigned char* band, int64_t bytes, uint64_t seed,
                                        uint64_t id) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < bytes;
       i += int64_t{gridDim.x} * blockDim.x) {
    band[i] = tasks::guard_byte(seed, id, static_cast<uint64_t>(i));
  }
}

__global__ void kiln_harness_check_guard(const unsigned char* band, int64_t bytes, uint64_t seed,
                                         uint64_t id, GuardCounters* out) {
  unsigned long long changed = 0;
  unsigned long long first = ~0ull;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  const int64_t begin = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  // Every lane runs the same number of iterations, so the warp reductions below are safe.
  const int64_t rounds = (bytes + stride - 1) / stride;
  for (int64_t r = 0; r < rounds; ++r) {
    const int64_t i = begin + r * stride;
    if (i < bytes && band[i] != tasks::guard_byte(seed, id, static_cast<uint64_t>(i))) {
      ++changed;
      first = min(first, static_cast<unsigned long long>(i));
    }
  }
  changed = warp_sum(changed);
  first = warp_min(first);
  if ((threadIdx.x & 31) == 0 && changed != 0) {
    atomicAdd(&out->changed, changed);
    atomicMin(&out->first, first);
  }
}

__global__ void kiln_harness_checksum(const unsigned char* data, int64_t bytes,
                                      unsigned long long* sum) {
  const int64_t words = (bytes + 7) / 8;
  const int64_t full = bytes / 8;
  const auto* word_data = reinterpret_cast<const unsigned long long*>(data);
  unsigned long long local = 0;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  const int64_t begin = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int64_t rounds = (words + stride - 1) / stride;
  for (int64_t r = 0; r < rounds; ++r) {
    const int64_t i = begin + r * stride;
    if (i >= words) continue;
    uint64_t word = 0;
    if (i < full) {
      word = word_data[i];
    } else {
      for (int64_t b = i * 8; b < bytes; ++b)
        word |= static_cast<uint64_t>(data[b]) << (8 * (b - i * 8));
    }
    local += tasks::checksum_term(word, static_cast<uint64_t>(i));
  }
  local = warp_sum(local);
  if ((threadIdx.x & 31) == 0) atomicAdd(sum, local);
}

__global__ void kiln_harness_compare(const void* actual, const void* expected, kiln_dtype dtype,
                                     int64_t n, double atol, double rtol, uint64_t poison,
                                     const uint8_t* ignored_rows, int64_t row_elements,
                                     CompareCounters* out) {
  const int size = tasks::dtype_size(dtype);
  unsigned long long mismatches = 0, far = 0, nan = 0, inf = 0, poisoned = 0, bitwise = 0;
  unsigned long long max_abs = 0, max_rel = 0, first = ~0ull;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  const int64_t begin = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int64_t rounds = (n + stride - 1) / stride;
  for (int64_t r = 0; r < rounds; ++r) {
    const int64_t i = begin + r * stride;
    if (i >= n) continue;
    if (ignored_rows != nullptr && ignored_rows[i / row_elements] != 0) continue;
    const uint64_t abits = load_element(actual, i, size);
    const uint64_t ebits = load_element(expected, i, size);
    const double a = tasks::decode(dtype, abits);
    const double e = tasks::decode(dtype, ebits);
    if (abits == poison) ++poisoned;
    if (abits != ebits) ++bitwise;
    if (tasks::is_nan(a)) ++nan;
    if (tasks::is_inf(a)) ++inf;
    if (!tasks::is_nan(a) && !tasks::is_inf(a) && !tasks::is_nan(e) && !tasks::is_inf(e)) {
      const double diff = tasks::magnitude(a - e);
      max_abs = max(max_abs, static_cast<unsigned long long>(tasks::bits_of(diff)));
      if (e != 0)
        max_rel = max(max_rel,
                      static_cast<unsigned long long>(tasks::bits_of(diff / tasks::magnitude(e))));
    }
    if (!tasks::element_passes(a, e, atol, rtol)) {
      ++mismatches;
      if (tasks::element_far(a, e, atol, rtol)) ++far;
      first = min(first, static_cast<unsigned long long>(i));
    }
  }
  mismatches = warp_sum(mismatches);
  far = warp_sum(far);
  nan = warp_sum(nan);
  inf = warp_sum(inf);
  poisoned = warp_sum(poisoned);
  bitwise = warp_sum(bitwise);
  max_abs = warp_max(max_abs);
  max_rel = warp_max(max_rel);
  first = warp_min(first);
  if ((threadIdx.x & 31) == 0) {
    if (mismatches) atomicAdd(&out->mismatches, mismatches);
    if (far) atomicAdd(&out->far, far);
    if (nan) atomicAdd(&out->nan, nan);
    if (inf) atomicAdd(&out->inf, inf);
    if (poisoned) atomicAdd(&out->poisoned, poisoned);
    if (bitwise) atomicAdd(&out->bitwise, bitwise);
    if (max_abs) atomicMax(&out->max_abs_bits, max_abs);
    if (max_rel) atomicMax(&out->max_rel_bits, max_rel);
    if (first != ~0ull) atomicMin(&out->first_mismatch, first);
  }
}

// Holds `stream` until the host sets *release (or timeout_ns passes: then *timed_out = 1).
__device__ unsigned long long global_ns() {
  unsigned long long now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

// Polls done() until it holds, or sets *timed_out = 1 once timeout_ns of GPU time passed.
template <typename Done>
__device__ void wait_until(Done done, unsigned long long timeout_ns, int* timed_out,
                           unsigned sleep_ns) {
  const unsigned long long start = global_ns();
  while (!done()) {
    if (global_ns() - start > timeout_ns) {
      *timed_out = 1;
      return;
    }
    __nanosleep(sleep_ns);
  }
}

// Fills the GPU: launched with as many blocks of kGateThreads threads as every SM holds at
// once, so while it spins no other kernel of this context (of any stream) can start. Each block
// marks itself resident in its own slot (plain stores: atomics to host memory over PCIe are not
// guaranteed); thread 0 polls the release flag, the others wait at the barrier, holding their
// share of the SM.
__global__ void __launch_bounds__(kGateThreads, 1)
    kiln_harness_hold(const volatile int* release, int* timed_out, volatile unsigned* resident,
                      unsigned generation, unsigned long long timeout_ns) {
  if (threadIdx.x == 0) {
    resident[blockIdx.x] = generation;
    __threadfence_system();
    wait_until([&] { return *release != 0; }, timeout_ns, timed_out, 1000);
  }
  __syncthreads();
}

// The tail probe: the same geometry as the hold, and every block waits until all have
// arrived, so it finishes only once the whole GPU was free at the same time: after every kernel
// that was still running when the call's last launch-stream work ended.
__global__ void __launch_bounds__(kGateThreads, 1)
    kiln_harness_tail_probe(unsigned* arrived, unsigned target, int* timed_out,
                            unsigned long long timeout_ns) {
  if (threadIdx.x == 0) {
    atomicAdd(arrived, 1u);
    wait_until([&] { return atomicAdd(arrived, 0u) >= target; }, timeout_ns, timed_out, 200);
  }
  __syncthreads();
}

__global__ void kiln_harness_empty() {}

__global__ void kiln_harness_reset_compare(CompareCounters* out) {
  *out = CompareCounters{};
  out->first_mismatch = ~0ull;
}

}  // namespace

cudaError_t launch_draw_uniform(void* data, int64_t elements, kiln_dtype dtype, double low,
                                double high, uint64_t key, cudaStream_t stream) {
  kiln_harness_draw_uniform<<<blocks_for(elements), kThreads, 0, stream>>>(data, elements, dtype,
                                                                           low, high, key);
  return cudaGetLastError();
}

int gate_blocks_per_sm() {
  int blocks = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kiln_harness_hold, kGateThreads, 0) !=
      cudaSuccess)
    return 0;
  int probe = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&probe, kiln_harness_tail_probe, kGateThreads,
                                                    0) != cudaSuccess)
    return 0;
  return std::min(blocks, probe);
}

cudaError_t launch_hold(const volatile int* release, int* timed_out, volatile unsigned* resident,
                        unsigned generation, int blocks, uint64_t timeout_ns, cudaStream_t stream) {
  kiln_harness_hold<<<blocks, kGateThreads, 0, stream>>>(release, timed_out, resident, generation,
                                                         timeout_ns);
  return cudaGetLastError();
}

cudaError_t launch_tail_probe(unsigned* arrived, unsigned target, int* timed_out, int blocks,
                              uint64_t timeout_ns, cudaStream_t stream) {
  kiln_harness_tail_probe<<<blocks, kGateThreads, 0, stream>>>(arrived, target, timed_out,
                                                               timeout_ns);
  return cudaGetLastError();
}

cudaError_t launch_empty(cudaStream_t stream) {
  kiln_harness_empty<<<1, 32, 0, stream>>>();
  return cudaGetLastError();
}

cudaError_t launch_fill_pattern(void* data, int64_t elements, int element_size, uint64_t pattern,
                                cudaStream_t stream) {
  kiln_harness_fill_pattern<<<blocks_for(elements), kThreads, 0, stream>>>(data, elements,
                                                                           element_size, pattern);
  return cudaGetLastError();
}

cudaError_t launch_fill_guard(unsigned char* band, int64_t bytes, uint64_t seed, uint64_t band_id,
                              cudaStream_t stream) {
  kiln_harness_fill_guard<<<blocks_for(bytes), kThreads, 0, stream>>>(band, bytes, seed, band_id);
  return cudaGetLastError();
}

cudaError_t launch_check_guard(const unsigned char* band, int64_t bytes, uint64_t seed,
                               uint64_t band_id, GuardCounters* counters, cudaStream_t stream) {
  kiln_harness_check_guard<<<blocks_for(bytes), kThreads, 0, stream>>>(band, bytes, seed, band_id,
                                                                       counters);
  return cudaGetLastError();
}

cudaError_t launch_checksum(const void* data, int64_t bytes, unsigned long long* sum,
                            cudaStream_t stream) {
  kiln_harness_checksum<<<blocks_for((bytes + 7) / 8), kThreads, 0, stream>>>(
      static_cast<const unsigned char*>(data), bytes, sum);
  return cudaGetLastError();
}

cudaError_t launch_compare(const void* actual, const void* expected, kiln_dtype dtype,
                           int64_t elements, double atol, double rtol, uint64_t poison,
                           const uint8_t* ignored_rows, int64_t row_elements,
                           CompareCounters* counters, cudaStream_t stream) {
  kiln_harness_compare<<<blocks_for(elements), kThreads, 0, stream>>>(
      actual, expected, dtype, elements, atol, rtol, poison, ignored_rows,
      row_elements > 0 ? row_elements : 1, counters);
  return cudaGetLastError();
}

cudaError_t reset_compare(CompareCounters* counters, cudaStream_t stream) {
  kiln_harness_reset_compare<<<1, 1, 0, stream>>>(counters);
  return cudaGetLastError();
}

}  // namespace kiln::worker
