// CUPTI activity tracing for the timed window: every kernel, memcpy and memset on any
// stream of the process (CONCURRENT_KERNEL, MEMCPY, MEMSET), and every runtime and
// driver API call with its host thread (RUNTIME, DRIVER), as ActivityRecords
// (activity_analysis.h) that the gates and the sample times are computed from.
//
// CUPTI delivers records through process-wide C callbacks, so one recorder exists per
// process, registered in start() and reached from the callbacks through a static
// pointer: the one piece of global state in the worker, forced by CUPTI's API.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <mutex>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/worker/activity_analysis.h"

namespace kiln::worker {

class ActivityRecorder {
 public:
  ActivityRecorder() = default;
  ~ActivityRecorder();
  ActivityRecorder(const ActivityRecorder&) = delete;
  ActivityRecorder& operator=(const ActivityRecorder&) = delete;

  // Registers the buffer callbacks and enables the activity kinds. Call before the first
  // CUDA call of the process, so kernels of every context are seen.
  Status start();
  bool running() const { return running_; }
  // Whether device memory allocations and releases are recorded too (kMemory records).
  bool memory_recorded() const { return running_ && memory_; }
  // Forces CUPTI to hand over every completed record, then returns and forgets them.
  std::vector<ActivityRecord> drain();
  // CUPTI's clock (the one the records use), in ns.
  uint64_t now() const;
  // CUPTI's id of a stream, as kernel records carry it.
  Result<uint32_t> stream_id(cudaStream_t stream) const;
  uint64_t dropped() const;
  // Enables every kind again, undoing whatever the measured code switched off; what went
  // unrecorded meanwhile is missing, which the harness's own markers in each window reveal
  // (checked_call.cpp).
  void keep_enabled();

  // Called from the CUPTI callbacks.
  void add(std::vector<ActivityRecord>&& records);

 private:
  bool running_ = false;
  bool memory_ = false;
  mutable std::mutex mutex_;
  std::vector<ActivityRecord> records_;
};

}  // namespace kiln::worker
