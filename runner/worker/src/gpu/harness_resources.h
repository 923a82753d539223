// The device resources a verify or benchmark job's harness holds for all its workloads: the
// launch stream (the one kiln_launch is given) and the harness's own stream, the L2 flush
// buffer, the launch gate and the scratch counters of the harness kernels. Made once the GPU
// is open; the streams live until the process exits, with the CUDA context.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>

#include "activity_recorder.h"
#include "checked_call.h"
#include "kiln/base/result.h"
#include "kiln/worker/activity_analysis.h"
#include "l2_flush.h"
#include "launch_gate.h"
#include "workload_buffers.h"

namespace kiln::worker {

class HarnessResources {
 public:
  // Streams, then the flush buffer (sized from the GPU's L2; none without `flush_l2_bytes`: the
  // candidate host, whose timed calls the verifier flushes for), the gate and the scratch; the
  // error names the first that failed.
  Status init(std::optional<int64_t> flush_l2_bytes);

  // The environment of every checked call (checked_call.h) over these resources (no flush
  // without a flush buffer); the job adds the recorder, the guard seed, the activity ids and
  // the hang timeout.
  CallEnvironment environment();

  // CUPTI's ids of the two streams and of the harness's own host thread, learnt from the
  // records a marker kernel on each stream leaves, so the gates can tell harness work from
  // the candidate's.
  Status learn_activity_ids(ActivityRecorder& recorder, ActivityContext* context);

 private:
  cudaStream_t launch_stream_ = nullptr;
  cudaStream_t harness_stream_ = nullptr;
  L2Flush flush_;  // initialized (bytes() > 0) only when the process flushes
  LaunchGate gate_;
  HarnessScratch scratch_;
};

}  // namespace kiln::worker
