#include "cold_l2_timer.h"

#include <algorithm>

namespace kiln::zoo {

ColdL2Timer::~ColdL2Timer() {
  if (start_ != nullptr) cudaEventDestroy(start_);
  if (stop_ != nullptr) cudaEventDestroy(stop_);
}

bool ColdL2Timer::init(std::string& error) {
  cudaError_t e = flush_.allocate(kFlushBytes);
  if (e != cudaSuccess) {
    error = cuda_failure("cudaMalloc of the 256 MiB L2 flush buffer", e);
    return false;
  }
  if ((e = cudaEventCreate(&start_)) != cudaSuccess ||
      (e = cudaEventCreate(&stop_)) != cudaSuccess) {
    error = cuda_failure("cudaEventCreate", e);
    return false;
  }
  return true;
}

bool ColdL2Timer::time(const std::function<bool(std::string&)>& enqueue,
                       std::vector<double>& samples_us, std::string& error) {
  // A different byte each time, so no layer can skip the write as redundant.
  cudaError_t e = cudaMemsetAsync(flush_.data(), sample_++ & 0xff, flush_.size(), stream_);
  if (e != cudaSuccess) {
    error = cuda_failure("cudaMemsetAsync (L2 flush)", e);
    return false;
  }
  if ((e = cudaEventRecord(start_, stream_)) != cudaSuccess) {
    error = cuda_failure("cudaEventRecord(start)", e);
    return false;
  }
  if (!enqueue(error)) return false;
  if ((e = cudaEventRecord(stop_, stream_)) != cudaSuccess) {
    error = cuda_failure("cudaEventRecord(stop)", e);
    return false;
  }
  if ((e = cudaEventSynchronize(stop_)) != cudaSuccess) {
    error = cuda_failure("cudaEventSynchronize (the timed work failed while running)", e);
    return false;
  }
  float ms = 0;
  if ((e = cudaEventElapsedTime(&ms, start_, stop_)) != cudaSuccess) {
    error = cuda_failure("cudaEventElapsedTime", e);
    return false;
  }
  samples_us.push_back(static_cast<double>(ms) * 1000.0);
  return true;
}

double median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  return n % 2 == 1 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

}  // namespace kiln::zoo
