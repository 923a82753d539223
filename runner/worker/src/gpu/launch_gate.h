// Holds the launch stream while kiln_launch enqueues its work, so a timed sample measures the
// GPU, not the host. Without it the stream is idle when kiln_launch starts, and a call that
// launches several kernels (cuBLAS: a split-K GEMM and its reduction) is charged for the host
// time between its launches: a 16x4096x4096 cuBLAS call measured 15 us or 25 us depending on
// how fast the host got the second kernel out (CV 22-28%, bench/RESULTS.md). nvbench solves the
// same problem with a blocking kernel; this is kiln's.
//
// hold() enqueues kiln_harness_hold, which spins on a flag in mapped host memory, and waits
// until it runs; release() sets the flag after kiln_launch returns. The hold fills the GPU
// (every SM's thread slots), so no work of the process, on any stream, runs while kiln_launch
// is being called: a kernel put on a private stream during the call cannot finish its work
// before the timed window opens. hold() reports whether the hold could fill the GPU: when it
// could not within kFillTimeoutNs, other work of the process was running as the call began.
//
// probe_tail() enqueues, on the harness stream after the call's stop event, a kernel of the
// same geometry whose blocks wait for each other: it completes only once the whole GPU was free
// at once, so the time from the stop event to its end says how long work the launch stream did
// not wait for went on after the call (on a private stream, unseen by the events).
//
// A kiln_launch that waits for the GPU itself (cudaStreamSynchronize, a synchronous cudaMemcpy)
// would wait for the hold forever, so the hold gives up after a timeout; the caller then stops
// gating that owner's calls (the candidate's, or the baseline's) for the rest of the job and
// says so. One owner's waiting never ungates the other: a candidate that waits inside its call
// cannot slow the baseline's samples. ActivityAnalysis knows the hold by its place (the first
// kernel of a gated window) and the probe by its stream (the harness's), never by a name.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <set>
#include <string>

#include "kiln/base/result.h"

namespace kiln::worker {

class LaunchGate {
 public:
  static constexpr uint64_t kTimeoutNs = 20'000'000;      // 20 ms: kiln_launch enqueues in < 1 ms
  static constexpr uint64_t kFillTimeoutNs = 20'000'000;  // an idle GPU starts the hold in µs
  static constexpr uint64_t kProbeTimeoutNs = 20'000'000;

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

  // Enqueues the hold on `stream` and waits until it runs; work enqueued after it waits for
  // release(). *filled: every block of the hold ran at once, so the GPU held nothing else.
  Status hold(cudaStream_t stream, bool* filled);
  // After the stop event is recorded and before release(): the tail probe on `harness`,
  // then `done` recorded there.
  Status probe_tail(cudaEvent_t stop, cudaStream_t harness, cudaEvent_t done);
  void release();
  // After the stream finished: whether the last hold gave up waiting for release().
  bool timed_out() const;
  // After `done`: whether the last probe gave up waiting for the GPU to be free.
  bool probe_timed_out() const;
  int blocks() const { return blocks_; }

 private:
  int* flags_ = nullptr;  // [0] release, [1] hold timed out, [2] probe timed out: mapped host
  int* device_flags_ = nullptr;
  unsigned* resident_ = nullptr;  // one slot per hold block: mapped host memory
  unsigned* device_resident_ = nullptr;
  unsigned* arrived_ = nullptr;  // the probe's counter: device memory, never reset
  unsigned generation_ = 0;
  unsigned probes_ = 0;
  int blocks_ = 0;
  std::set<std::string> ungated_;
};

}  // namespace kiln::worker
