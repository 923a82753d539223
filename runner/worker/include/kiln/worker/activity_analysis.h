// What the CUPTI activity records of one timed call say (hidden_stream_work gate and
// the sample's time). Pure logic over plain records, so it is tested without a GPU.
//
// A sample's time is the span from the first start to the last end of every GPU
// record (kernel, memcpy, memset) on any stream that overlaps the call's window
// [open, close], where the window closes only after a device-wide synchronize: work
// hidden on another stream or left running after kiln_launch returned is charged.
//
// The gate fails, for the candidate, on: GPU work on a stream other than the one it
// was given that was still running when kiln_launch returned (unordered with that
// stream); CUDA API calls from a host thread other than the one that called
// kiln_launch; GPU work outside every window (started late by a background thread).
// Off-stream work that finished before kiln_launch returned is charged and noted.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace kiln::worker {

struct ActivityRecord {
  enum class Kind { kKernel, kMemcpy, kMemset, kRuntimeApi, kDriverApi, kMemory };
  Kind kind = Kind::kKernel;
  uint64_t start = 0;  // ns, CUPTI timestamps (the same clock as cuptiGetTimestamp)
  uint64_t end = 0;
  uint32_t stream_id = 0;
  uint32_t thread_id = 0;  // API records only
  std::string name;        // kernel name or API function name
  int64_t bytes = 0;       // kMemory: + allocated, - released (at start)

  bool is_gpu() const {
    return kind == Kind::kKernel || kind == Kind::kMemcpy || kind == Kind::kMemset;
  }
};

struct CallWindow {
  std::string owner;          // "candidate" | "baseline"
  uint64_t open = 0;          // before the start event
  uint64_t launch_begin = 0;  // host time around the kiln_launch call itself
  uint64_t launch_end = 0;
  uint64_t close = 0;  // after the device-wide synchronize
  // The launch gate held the launch stream: its hold kernel, the first kernel on that
  // stream in the window, is the harness's and is not charged.
  bool gated = false;
};

struct WindowFindings {
  uint64_t span_ns = 0;  // first GPU start to last GPU end in the window; 0 when none
  int gpu_records = 0;
  int kernels = 0;
  std::set<std::string> kernel_names;
  std::vector<std::string> violations;  // fail hidden_stream_work
  std::vector<std::string> notes;       // charged and reported
  // Host synchronization by the calling thread inside kiln_launch ("cudaStreamSynchronize x2"):
  // a failure of hidden_stream_work unless the task allows it, else a note.
  std::vector<std::string> host_syncs;
};

struct ActivityContext {
  uint32_t launch_stream = 0;          // the stream given to kiln_launch
  std::set<uint32_t> harness_streams;  // the harness's own streams (never charged)
  std::set<uint32_t> harness_threads;  // threads allowed to call CUDA (the worker's main thread)
};

class ActivityAnalysis {
 public:
  static WindowFindings analyze(const std::vector<ActivityRecord>& records,
                                const CallWindow& window, const ActivityContext& context);
  // GPU work outside every window and not on a harness stream, attributed to the owner of
  // the last window that closed before it ("after the candidate's call: kernel k on stream 9").
  static std::vector<std::string> stray_work(const std::vector<ActivityRecord>& records,
                                             const std::vector<CallWindow>& windows,
                                             const ActivityContext& context,
                                             std::vector<std::string>* owners);
  // API calls made by threads outside the context's harness threads, by any owner.
  static std::vector<std::string> foreign_thread_calls(const std::vector<ActivityRecord>& records,
                                                       const ActivityContext& context);
};

}  // namespace kiln::worker
