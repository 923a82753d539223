// Times one enqueued piece of GPU work with CUDA events, L2 flushed first: a
// cudaMemsetAsync over a buffer several times the L2 size runs on the same stream right
// before the start event, so each sample starts with a cold cache.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <string>
#include <vector>

#include "device_buffer.h"

namespace kiln::zoo {

class ColdL2Timer {
 public:
  static constexpr size_t kFlushBytes = size_t{256} << 20;  // 256 MiB >= 2x any current L2

  explicit ColdL2Timer(cudaStream_t stream) : stream_(stream) {}
  ~ColdL2Timer();
  ColdL2Timer(const ColdL2Timer&) = delete;
  ColdL2Timer& operator=(const ColdL2Timer&) = delete;

  // Allocates the flush buffer and events; false (with `error`) when that fails.
  bool init(std::string& error);
  // Flushes L2, then times enqueue() (which returns false when it could not enqueue, with
  // its own message in `error`). Appends the time in microseconds to `samples_us`.
  bool time(const std::function<bool(std::string&)>& enqueue, std::vector<double>& samples_us,
            std::string& error);

 private:
  cudaStream_t stream_;
  DeviceBuffer flush_;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
  int sample_ = 0;
};

// The median of `samples` (the mean of the middle two for an even count); 0 when empty.
double median(std::vector<double> samples);

}  // namespace kiln::zoo
