// The harness's own GPU kernels (names start with kiln_harness_, so profiles and
// sanitizer reports can tell them from the candidate's): drawing inputs, poisoning
// outputs, guard bands, input checksums and output comparison. All run on the
// harness stream; results land in device counters the caller copies back.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kiln/abi.h"

namespace kiln::worker {

struct CompareCounters {
  unsigned long long mismatches;
  unsigned long long far;  // mismatches beyond tasks::kNearMissFactor x the tolerance
  unsigned long long nan;
  unsigned long long inf;
  unsigned long long poisoned;      // actual == poison pattern
  unsigned long long bitwise;       // actual != expected bitwise
  unsigned long long max_abs_bits;  // non-negative doubles compare like their bits
  unsigned long long max_rel_bits;
  unsigned long long first_mismatch;  // flat index; ~0 when none
};

struct GuardCounters {
  unsigned long long changed;
  unsigned long long first;  // ~0 when none
};

// Uniform draws in [low, high) rounded to the dtype, element i from unit_draw(key, i).
cudaError_t launch_draw_uniform(void* data, int64_t elements, kiln_dtype dtype, double low,
                                double high, uint64_t key, cudaStream_t stream);
// The launch gate's kernels (launch_gate.h). Both run `blocks` blocks of 1024 threads, the
// number every SM of the device holds at once (gate_blocks_per_sm() times the SM count; 0 when
// the occupancy cannot be read), so nothing else of this context runs beside them.
int gate_blocks_per_sm();
// Spins until *release (mapped host memory) is non-zero, or until timeout_ns of GPU time pass,
// then sets *timed_out = 1. Block b sets resident[b] = generation once it runs.
cudaError_t launch_hold(const volatile int* release, int* timed_out, volatile unsigned* resident,
                        unsigned generation, int blocks, uint64_t timeout_ns, cudaStream_t stream);
// Every block adds one to *arrived (device memory) and waits until it reaches `target`, or
// sets *timed_out = 1 after timeout_ns: it completes only when the whole GPU was free at once.
cudaError_t launch_tail_probe(unsigned* arrived, unsigned target, int* timed_out, int blocks,
                              uint64_t timeout_ns, cudaStream_t stream);
// Every element := pattern (element bytes taken from the pattern's low bytes).
cudaError_t launch_fill_pattern(void* data, int64_t elements, int element_size, uint64_t pattern,
                                cudaStream_t stream);
cudaError_t launch_fill_guard(unsigned char* band, int64_t bytes, uint64_t seed, uint64_t band_id,
                              cudaStream_t stream);
// Adds to *counters (zeroed by the caller).
cudaError_t launch_check_guard(const unsigned char* band, int64_t bytes, uint64_t seed,
                               uint64_t band_id, GuardCounters* counters, cudaStream_t stream);
// Adds the checksum of `bytes` bytes at `data` (8-byte aligned) to *sum (zeroed by the caller).
cudaError_t launch_checksum(const void* data, int64_t bytes, unsigned long long* sum,
                            cudaStream_t stream);
// Element-wise comparison under (atol, rtol); `counters` must be reset first (reset_compare).
// `ignored_rows` (device, one byte per row of `row_elements` elements; null: none) flags rows
// outside the contract (task.json "ignore_rows_where"): their elements count for nothing.
cudaError_t launch_compare(const void* actual, const void* expected, kiln_dtype dtype,
                           int64_t elements, double atol, double rtol, uint64_t poison,
                           const uint8_t* ignored_rows, int64_t row_elements,
                           CompareCounters* counters, cudaStream_t stream);
cudaError_t reset_compare(CompareCounters* counters, cudaStream_t stream);
// One block that does nothing: the candidate host's probe calls run it in place of
// kiln_launch (candidate_host_protocol.h).
cudaError_t launch_empty(cudaStream_t stream);

}  // namespace kiln::worker
