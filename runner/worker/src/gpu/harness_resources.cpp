#include "harness_resources.h"

#include <string>

#include "cuda_status.h"
#include "harness_kernels.h"

namespace kiln::worker {

Status HarnessResources::init(std::optional<int64_t> flush_l2_bytes) {
  if (auto s = cuda_ok(cudaStreamCreateWithFlags(&launch_stream_, cudaStreamNonBlocking),
                       "cudaStreamCreate");
      !s)
    return s;
  if (auto s = cuda_ok(cudaStreamCreateWithFlags(&harness_stream_, cudaStreamNonBlocking),
                       "cudaStreamCreate");
      !s)
    return s;
  if (flush_l2_bytes) {
    if (auto s = flush_.init(*flush_l2_bytes); !s) return s;
  }
  if (auto s = gate_.init(); !s) return s;
  return scratch_.init();
}

CallEnvironment HarnessResources::environment() {
  CallEnvironment env;
  env.launch_stream = launch_stream_;
  env.harness_stream = harness_stream_;
  env.flush = flush_.bytes() > 0 ? &flush_ : nullptr;
  env.gate = &gate_;
  env.scratch = &scratch_;
  return env;
}

Status HarnessResources::learn_activity_ids(ActivityRecorder& recorder, ActivityContext* context) {
  recorder.drain();
  for (int which = 0; which < 2; ++which) {
    const cudaStream_t stream = which == 0 ? launch_stream_ : harness_stream_;
    if (auto s = cuda_ok(launch_fill_pattern(scratch_.sums(), 1, 8, 0, stream), "marker kernel");
        !s)
      return s;
    if (auto s = cuda_ok(cudaStreamSynchronize(stream), "marker kernel"); !s) return s;
    bool found = false;
    for (const auto& r : recorder.drain()) {
      if (r.kind == ActivityRecord::Kind::kKernel &&
          r.name.find("kiln_harness_fill_pattern") != std::string::npos) {
        if (which == 0) {
          context->launch_stream = r.stream_id;
        } else {
          context->harness_streams.insert(r.stream_id);
        }
        found = true;
      } else if (!r.is_gpu()) {
        context->harness_threads.insert(r.thread_id);
      }
    }
    if (!found) return make_error("CUPTI recorded no kernel for the harness's marker launch");
  }
  return Ok{};
}

}  // namespace kiln::worker
