#include "launch_gate.h"

#include <atomic>

#include "cuda_status.h"
#include "harness_kernels.h"

namespace kiln::worker {

LaunchGate::~LaunchGate() {
  if (flags_ != nullptr) cudaFreeHost(flags_);
}

Status LaunchGate::init() {
  void* host = nullptr;
  if (auto s = cuda_ok(cudaHostAlloc(&host, 2 * sizeof(int), cudaHostAllocMapped),
                       "cudaHostAlloc(launch gate)");
      !s) {
    return s;
  }
  flags_ = static_cast<int*>(host);
  flags_[0] = flags_[1] = 0;
  void* device = nullptr;
  if (auto s = cuda_ok(cudaHostGetDevicePointer(&device, host, 0), "cudaHostGetDevicePointer");
      !s) {
    cudaFreeHost(flags_);
    flags_ = nullptr;
    return s;
  }
  device_flags_ = static_cast<int*>(device);
  return Ok{};
}

Status LaunchGate::hold(cudaStream_t stream) {
  std::atomic_ref<int>(flags_[0]).store(0, std::memory_order_seq_cst);
  std::atomic_ref<int>(flags_[1]).store(0, std::memory_order_seq_cst);
  return cuda_ok(launch_hold(device_flags_, device_flags_ + 1, kTimeoutNs, stream),
                 "launching the launch-gate hold");
}

void LaunchGate::release() {
  if (flags_ != nullptr) std::atomic_ref<int>(flags_[0]).store(1, std::memory_order_seq_cst);
}

bool LaunchGate::timed_out() const {
  return flags_ != nullptr && std::atomic_ref<int>(flags_[1]).load(std::memory_order_seq_cst) != 0;
}

}  // namespace kiln::worker
