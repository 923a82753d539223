// Cold L2 before each timed call: a memset over a buffer at least twice the L2 size
// (cudaDeviceProp::l2CacheSize) on the harness stream evicts whatever the previous call
// left, so every sample pays for its own reads from HBM, as a kernel in a real model would.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kiln/base/result.h"

namespace kiln::worker {

class L2Flush {
 public:
  L2Flush() = default;
  ~L2Flush();
  L2Flush(const L2Flush&) = delete;
  L2Flush& operator=(const L2Flush&) = delete;

  Status init(int64_t l2_bytes);
  // Enqueues the flush on `stream` (the caller synchronizes before the timed call).
  Status enqueue(cudaStream_t stream);
  int64_t bytes() const { return bytes_; }  // 0 until init

 private:
  void* buffer_ = nullptr;
  int64_t bytes_ = 0;
  int value_ = 0;
};

}  // namespace kiln::worker
