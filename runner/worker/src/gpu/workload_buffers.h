// Device memory for one workload: every tensor in its own allocation between two guard
// bands (guard_band.h). Inputs are shared by the candidate and the baseline (both read
// the same values); each of them writes its own output set, so neither can see the
// other's results through a shared buffer.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "harness_kernels.h"
#include "kiln/base/result.h"
#include "kiln/tasks/reference_check.h"
#include "kiln/tasks/tensor_layout.h"
#include "kiln/worker/guard_band.h"

namespace kiln::worker {

class GuardedBuffer {
 public:
  GuardedBuffer() = default;
  ~GuardedBuffer();
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  // Allocates data_bytes plus bands; bands numbered band_id and band_id + 1 under seed.
  Status allocate(int64_t data_bytes, uint64_t seed, uint64_t band_id, const std::string& label);
  Status fill_guards(cudaStream_t stream);
  // Checks both bands; `counters` is two GuardCounters of device scratch.
  Result<GuardDamage> check_guards(GuardCounters* counters, cudaStream_t stream) const;

  void* data() const { return static_cast<unsigned char*>(base_) + layout_.data_offset; }
  int64_t bytes() const { return layout_.data_bytes; }
  // The whole allocation (guard bands included), as CUDA IPC shares it, and where data starts.
  void* base() const { return base_; }
  int64_t data_offset() const { return layout_.data_offset; }

 private:
  void* base_ = nullptr;
  GuardLayout layout_;
  uint64_t seed_ = 0;
  uint64_t band_id_ = 0;
};

// Buffers for some of a workload's tensors (by ABI index; null where not owned).
class TensorSet {
 public:
  // Allocates the inputs (want_inputs) and/or outputs (want_outputs) of `layout`.
  Status allocate(const tasks::WorkloadLayout& layout, bool want_inputs, bool want_outputs,
                  uint64_t seed, uint64_t* next_band, cudaStream_t stream);
  GuardedBuffer* at(size_t tensor) const {
    return tensor < buffers_.size() ? buffers_[tensor].get() : nullptr;
  }
  size_t size() const { return buffers_.size(); }

 private:
  std::vector<std::unique_ptr<GuardedBuffer>> buffers_;
};

// The pointers of a call: inputs from one set, outputs from another.
std::vector<void*> call_pointers(const tasks::WorkloadLayout& layout, const TensorSet& inputs,
                                 const TensorSet& outputs);

// Small device scratch for the harness kernels' counters, and the verifier's copies to the host.
class HarnessScratch {
 public:
  ~HarnessScratch();
  Status init();
  CompareCounters* compare() const { return compare_; }
  GuardCounters* guards() const { return guards_; }
  unsigned long long* sums() const { return sums_; }  // kMaxSums entries
  static constexpr int kMaxSums = 64;

  // Copies a device buffer to host (on `stream`, then waits). Through two pinned staging
  // chunks, allocated on first use: a pageable copy of a few hundred MB runs at under 1 GB/s,
  // and copying one chunk out of pinned memory overlaps the next chunk's transfer.
  Status copy_to_host(const void* device, int64_t bytes, std::vector<unsigned char>* host,
                      cudaStream_t stream);

 private:
  static constexpr size_t kStagingChunk = size_t{16} << 20;
  CompareCounters* compare_ = nullptr;
  GuardCounters* guards_ = nullptr;
  unsigned long long* sums_ = nullptr;
  unsigned char* staging_[2] = {nullptr, nullptr};
  cudaEvent_t staged_[2] = {nullptr, nullptr};
};

}  // namespace kiln::worker
