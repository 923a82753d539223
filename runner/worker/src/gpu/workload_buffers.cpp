#include "workload_buffers.h"

#include <algorithm>
#include <cstring>

#include "cuda_status.h"

namespace kiln::worker {

GuardedBuffer::~GuardedBuffer() {
  if (base_ != nullptr) cudaFree(base_);
}

Status GuardedBuffer::allocate(int64_t data_bytes, uint64_t seed, uint64_t band_id,
                               const std::string& label) {
  layout_ = GuardBand::layout_for(data_bytes);
  seed_ = seed;
  band_id_ = band_id;
  return cuda_ok(cudaMalloc(&base_, static_cast<size_t>(layout_.total_bytes)),
                 "cudaMalloc(" + std::to_string(layout_.total_bytes) + " bytes for " + label + ")");
}

Status GuardedBuffer::fill_guards(cudaStream_t stream) {
  auto* base = static_cast<unsigned char*>(base_);
  if (auto s = cuda_ok(launch_fill_guard(base, layout_.band_bytes, seed_, band_id_, stream),
                       "guard fill");
      !s)
    return s;
  return cuda_ok(launch_fill_guard(base + layout_.after_offset(), layout_.band_bytes, seed_,
                                   band_id_ + 1, stream),
                 "guard fill");
}

Result<GuardDamage> GuardedBuffer::check_guards(GuardCounters* counters,
                                                cudaStream_t stream) const {
  const auto* base = static_cast<const unsigned char*>(base_);
  GuardCounters init[2] = {{0, ~0ull}, {0, ~0ull}};
  if (auto s = cuda_ok(cudaMemcpyAsync(counters, init, sizeof init, cudaMemcpyHostToDevice, stream),
                       "guard reset");
      !s) {
    return s.error();
  }
  if (auto s =
          cuda_ok(launch_check_guard(base, layout_.band_bytes, seed_, band_id_, counters, stream),
                  "guard check");
      !s) {
    return s.error();
  }
  if (auto s = cuda_ok(launch_check_guard(base + layout_.after_offset(), layout_.band_bytes, seed_,
                                          band_id_ + 1, counters + 1, stream),
                       "guard check");
      !s) {
    return s.error();
  }
  GuardCounters result[2];
  if (auto s =
          cuda_ok(cudaMemcpyAsync(result, counters, sizeof result, cudaMemcpyDeviceToHost, stream),
                  "guard read");
      !s) {
    return s.error();
  }
  if (auto s = cuda_ok(cudaStreamSynchronize(stream), "guard check"); !s) return s.error();
  GuardDamage damage;
  damage.bytes_changed = static_cast<int64_t>(result[0].changed + result[1].changed);
  if (result[1].changed != 0) {
    damage.first_offset = static_cast<int64_t>(result[1].first);
  }
  if (result[0].changed != 0) {  // report the band before the data when both changed
    damage.before = true;
    damage.first_offset = layout_.band_bytes - static_cast<int64_t>(result[0].first);
  }
  return damage;
}

Status TensorSet::allocate(const tasks::WorkloadLayout& layout, bool want_inputs, bool want_outputs,
                           uint64_t seed, uint64_t* next_band, cudaStream_t stream) {
  buffers_.clear();
  buffers_.resize(layout.tensors.size());
  for (size_t t = 0; t < layout.tensors.size(); ++t) {
    const tasks::TensorLayout& tensor = layout.tensors[t];
    if (tensor.is_output ? !want_outputs : !want_inputs) continue;
    auto buffer = std::make_unique<GuardedBuffer>();
    if (auto s = buffer->allocate(tensor.bytes(), seed, *next_band, tensor.name); !s) return s;
    *next_band += 2;
    if (auto s = buffer->fill_guards(stream); !s) return s;
    buffers_[t] = std::move(buffer);
  }
  return cuda_ok(cudaStreamSynchronize(stream), "guard fill");
}

std::vector<void*> call_pointers(const tasks::WorkloadLayout& layout, const TensorSet& inputs,
                                 const TensorSet& outputs) {
  std::vector<void*> pointers;
  for (size_t t = 0; t < layout.tensors.size(); ++t) {
    const TensorSet& set = layout.tensors[t].is_output ? outputs : inputs;
    pointers.push_back(set.at(t) != nullptr ? set.at(t)->data() : nullptr);
  }
  return pointers;
}

HarnessScratch::~HarnessScratch() {
  if (compare_ != nullptr) cudaFree(compare_);
  if (guards_ != nullptr) cudaFree(guards_);
  if (sums_ != nullptr) cudaFree(sums_);
  for (int i = 0; i < 2; ++i) {
    if (staging_[i] != nullptr) cudaFreeHost(staging_[i]);
    if (staged_[i] != nullptr) cudaEventDestroy(staged_[i]);
  }
}

Status HarnessScratch::init() {
  if (auto s = cuda_ok(cudaMalloc(reinterpret_cast<void**>(&compare_), sizeof(CompareCounters)),
                       "cudaMalloc(scratch)");
      !s)
    return s;
  if (auto s = cuda_ok(cudaMalloc(reinterpret_cast<void**>(&guards_), 2 * sizeof(GuardCounters)),
                       "cudaMalloc(scratch)");
      !s)
    return s;
  return cuda_ok(
      cudaMalloc(reinterpret_cast<void**>(&sums_), kMaxSums * sizeof(unsigned long long)),
      "cudaMalloc(scratch)");
}

Status HarnessScratch::copy_to_host(const void* device, int64_t bytes,
                                    std::vector<unsigned char>* host, cudaStream_t stream) {
  host->resize(static_cast<size_t>(bytes));
  for (int i = 0; i < 2; ++i) {
    if (staging_[i] == nullptr) {
      if (auto s = cuda_ok(cudaHostAlloc(reinterpret_cast<void**>(&staging_[i]), kStagingChunk,
                                         cudaHostAllocDefault),
                           "cudaHostAlloc(staging)");
          !s)
        return s;
    }
    if (staged_[i] == nullptr) {
      if (auto s = cuda_ok(cudaEventCreateWithFlags(&staged_[i], cudaEventDisableTiming),
                           "cudaEventCreate(staging)");
          !s)
        return s;
    }
  }
  const auto* from = static_cast<const unsigned char*>(device);
  const auto total = static_cast<size_t>(bytes);
  // Chunk c goes to staging_[c % 2]; it is copied out once chunk c + 1 is on its way, and
  // before chunk c + 2 reuses its half.
  auto drain = [&](size_t chunk) -> Status {
    const int half = static_cast<int>(chunk % 2);
    if (auto s = cuda_ok(cudaEventSynchronize(staged_[half]), "cudaEventSynchronize(staging)"); !s)
      return s;
    const size_t offset = chunk * kStagingChunk;
    std::memcpy(host->data() + offset, staging_[half], std::min(kStagingChunk, total - offset));
    return Ok{};
  };
  const size_t chunks = (total + kStagingChunk - 1) / kStagingChunk;
  for (size_t c = 0; c < chunks; ++c) {
    const int half = static_cast<int>(c % 2);
    const size_t offset = c * kStagingChunk;
    if (auto s = cuda_ok(
            cudaMemcpyAsync(staging_[half], from + offset, std::min(kStagingChunk, total - offset),
                            cudaMemcpyDeviceToHost, stream),
            "cudaMemcpyAsync(device to host)");
        !s)
      return s;
    if (auto s = cuda_ok(cudaEventRecord(staged_[half], stream), "cudaEventRecord(staging)"); !s)
      return s;
    if (c > 0) {
      if (auto s = drain(c - 1); !s) return s;
    }
  }
  if (chunks > 0) return drain(chunks - 1);
  return cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize(copy to host)");
}

}  // namespace kiln::worker
