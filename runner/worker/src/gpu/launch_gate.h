// Holds the launch stream while kiln_launch enqueues its work, so a timed sample measures the
// GPU, not the host. Without it the stream is idle when kiln_launch starts, and a call that
// launches several kernels (cuBLAS: a split-K GEMM and its reduction) is charged for the host
// time between its launches: a 16x4096x4096 cuBLAS call measured 15 us or 25 us depending on
// how fast the host got the second kernel out (CV 22-28%, bench/RESULTS.md). nvbench solves the
// same problem with a blocking kernel; this is kiln's.
//
// hold() enqueues a one-thread kernel (kiln_harness_hold) that spins on a flag in mapped host
// memory; release() sets the flag after kiln_launch returns. The hold kernel is harness work:
// ActivityAnalysis never charges kiln_harness_* kernels. A kiln_launch that waits for the GPU
// itself (cudaStreamSynchronize, a synchronous cudaMemcpy) would wait for the hold forever, so
// the hold gives up after a timeout; the caller then stops gating that owner's calls (the
// candidate's, or the baseline's) for the rest of the job and says so. One owner's waiting never
// ungates the other: a candidate that waits inside its call cannot slow the baseline's samples.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <set>
#include <string>

#include "kiln/base/result.h"

namespace kiln::worker {

class LaunchGate {
 public:
  static constexpr uint64_t kTimeoutNs = 20'000'000;  // 20 ms: kiln_launch enqueues in < 1 ms

  LaunchGate() = default;
  ~LaunchGate();
  LaunchGate(const LaunchGate&) = delete;
  LaunchGate& operator=(const LaunchGate&) = delete;

  Status init();
  // Whether calls of `owner` ("candidate", "baseline") are still gated.
  bool enabled(const std::string& owner) const {
    return flags_ != nullptr && ungated_.count(owner) == 0;
  }
  void disable(const std::string& owner) { ungated_.insert(owner); }

  // Enqueues the hold on `stream`; work enqueued after it waits for release().
  Status hold(cudaStream_t stream);
  void release();
  // After the stream finished: whether the last hold gave up waiting for release().
  bool timed_out() const;

 private:
  int* flags_ = nullptr;  // [0] release, [1] timed out: mapped host memory
  int* device_flags_ = nullptr;
  std::set<std::string> ungated_;
};

}  // namespace kiln::worker
