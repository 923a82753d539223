#include "launch_gate.h"

#include <atomic>
#include <chrono>
#include <string>

#include "cuda_status.h"
#include "harness_kernels.h"

namespace kiln::worker {

LaunchGate::~LaunchGate() {
  if (flags_ != nullptr) cudaFreeHost(flags_);
  if (resident_ != nullptr) cudaFreeHost(resident_);
  if (arrived_ != nullptr) cudaFree(arrived_);
}

namespace {

template <typename T>
Status mapped(size_t count, T** host, T** device, const char* what) {
  void* h = nullptr;
  if (auto s = cuda_ok(cudaHostAlloc(&h, count * sizeof(T), cudaHostAllocMapped),
                       std::string("cudaHostAlloc(") + what + ")");
      !s) {
    return s;
  }
  *host = static_cast<T*>(h);
  for (size_t i = 0; i < count; ++i) (*host)[i] = T{};
  void* d = nullptr;
  if (auto s = cuda_ok(cudaHostGetDevicePointer(&d, h, 0), "cudaHostGetDevicePointer"); !s)
    return s;
  *device = static_cast<T*>(d);
  return Ok{};
}

}  // namespace

Status LaunchGate::init() {
  int device = 0;
  int sms = 0;
  if (auto s = cuda_ok(cudaGetDevice(&device), "cudaGetDevice"); !s) return s;
  if (auto s = cuda_ok(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                       "reading the SM count");
      !s) {
    return s;
  }
  const int per_sm = gate_blocks_per_sm();
  if (per_sm <= 0 || sms <= 0) {
    return Error{"the launch gate could not size itself to the GPU (" + std::to_string(sms) +
                 " SMs, " + std::to_string(per_sm) +
                 " hold blocks per SM); the worker cannot time calls on this device"};
  }
  blocks_ = sms * per_sm;
  if (auto s = mapped<int>(3, &flags_, &device_flags_, "launch gate flags"); !s) return s;
  if (auto s = mapped<unsigned>(static_cast<size_t>(blocks_), &resident_, &device_resident_,
                                "launch gate residency");
      !s) {
    return s;
  }
  void* arrived = nullptr;
  if (auto s = cuda_ok(cudaMalloc(&arrived, sizeof(unsigned)), "cudaMalloc(tail probe)"); !s)
    return s;
  arrived_ = static_cast<unsigned*>(arrived);
  return cuda_ok(cudaMemset(arrived_, 0, sizeof(unsigned)), "cudaMemset(tail probe)");
}

Status LaunchGate::hold(cudaStream_t stream, bool* filled) {
  std::atomic_ref<int>(flags_[0]).store(0, std::memory_order_seq_cst);
  std::atomic_ref<int>(flags_[1]).store(0, std::memory_order_seq_cst);
  const unsigned generation = ++generation_;
  if (auto s = cuda_ok(launch_hold(device_flags_, device_flags_ + 1, device_resident_, generation,
                                   blocks_, kTimeoutNs, stream),
                       "launching the launch-gate hold");
      !s) {
    return s;
  }
  // Wait (bounded) until every block runs: then nothing else of the process is on the GPU.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(kFillTimeoutNs);
  int next = 0;  // blocks before it are resident
  while (true) {
    while (next < blocks_ &&
           std::atomic_ref<unsigned>(resident_[next]).load(std::memory_order_acquire) ==
               generation) {
      ++next;
    }
    if (next == blocks_) break;
    if (std::chrono::steady_clock::now() > deadline) break;
  }
  *filled = next == blocks_;
  return Ok{};
}

Status LaunchGate::probe_tail(cudaEvent_t stop, cudaStream_t harness, cudaEvent_t done) {
  std::atomic_ref<int>(flags_[2]).store(0, std::memory_order_seq_cst);
  ++probes_;
  if (auto s = cuda_ok(cudaStreamWaitEvent(harness, stop, 0), "the tail probe's wait"); !s)
    return s;
  const unsigned target = probes_ * static_cast<unsigned>(blocks_);
  if (auto s = cuda_ok(
          launch_tail_probe(arrived_, target, device_flags_ + 2, blocks_, kProbeTimeoutNs, harness),
          "launching the tail probe");
      !s) {
    return s;
  }
  return cuda_ok(cudaEventRecord(done, harness), "recording the tail probe's end");
}

void LaunchGate::release() {
  if (flags_ != nullptr) std::atomic_ref<int>(flags_[0]).store(1, std::memory_order_seq_cst);
}

bool LaunchGate::timed_out() const {
  return flags_ != nullptr && std::atomic_ref<int>(flags_[1]).load(std::memory_order_seq_cst) != 0;
}

bool LaunchGate::probe_timed_out() const {
  return flags_ != nullptr && std::atomic_ref<int>(flags_[2]).load(std::memory_order_seq_cst) != 0;
}

}  // namespace kiln::worker
