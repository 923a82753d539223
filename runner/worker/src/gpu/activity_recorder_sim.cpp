// The simulated build's ActivityRecorder (activity_recorder.h): kiln's simulated CUDA runtime
// has no CUPTI, so nothing is recorded. start() says so, and the job then marks the gates that
// need an activity record (activity_record, hidden_stream_work, device_memory) as not run, which
// leaves the result unscored, exactly as a GPU worker whose CUPTI is unavailable does.
#include "activity_recorder.h"

namespace kiln::worker {

ActivityRecorder::~ActivityRecorder() = default;

Status ActivityRecorder::start() {
  return make_error("the simulated CUDA runtime records no activity (it has no CUPTI)");
}

void ActivityRecorder::keep_enabled() {}

std::vector<ActivityRecord> ActivityRecorder::drain() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<ActivityRecord> out;
  out.swap(records_);
  return out;
}

uint64_t ActivityRecorder::now() const { return 0; }

Result<uint32_t> ActivityRecorder::stream_id(cudaStream_t) const {
  return make_error("the simulated CUDA runtime has no stream ids (no CUPTI)");
}

uint64_t ActivityRecorder::dropped() const { return 0; }

void ActivityRecorder::add(std::vector<ActivityRecord>&& records) {
  std::lock_guard<std::mutex> lock(mutex_);
  records_.insert(records_.end(), std::make_move_iterator(records.begin()),
                  std::make_move_iterator(records.end()));
}

}  // namespace kiln::worker
