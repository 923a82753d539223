#include "l2_flush.h"

#include <algorithm>

#include "cuda_status.h"

namespace kiln::worker {

L2Flush::~L2Flush() {
  if (buffer_ != nullptr) cudaFree(buffer_);
}

Status L2Flush::init(int64_t l2_bytes) {
  bytes_ = std::max<int64_t>(2 * l2_bytes, int64_t{64} << 20);
  bytes_ = (bytes_ + (1 << 20) - 1) / (1 << 20) * (1 << 20);
  return cuda_ok(cudaMalloc(&buffer_, static_cast<size_t>(bytes_)), "cudaMalloc(L2 flush buffer)");
}

Status L2Flush::enqueue(cudaStream_t stream) {
  value_ ^= 0x5a;  // a different value each time, so nothing can be skipped as a repeat
  return cuda_ok(cudaMemsetAsync(buffer_, value_, static_cast<size_t>(bytes_), stream),
                 "cudaMemsetAsync(L2 flush)");
}

}  // namespace kiln::worker
