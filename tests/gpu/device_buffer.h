// Device memory owned by an object (cudaFree on destruction), and the text of a CUDA
// error for failure messages.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <utility>

namespace kiln::zoo {

// "cudaMemcpy(C) failed: cudaErrorIllegalAddress (an illegal memory access was encountered)"
inline std::string cuda_failure(const std::string& what, cudaError_t error) {
  return what + " failed: " + cudaGetErrorName(error) + " (" + cudaGetErrorString(error) + ")";
}

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      data_ = std::exchange(other.data_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }

  cudaError_t allocate(size_t bytes) {
    reset();
    const cudaError_t error = cudaMalloc(&data_, bytes == 0 ? 1 : bytes);
    if (error != cudaSuccess) {
      data_ = nullptr;
      return error;
    }
    bytes_ = bytes;
    return cudaSuccess;
  }
  void reset() {
    if (data_ != nullptr) cudaFree(data_);
    data_ = nullptr;
    bytes_ = 0;
  }
  unsigned char* data() const { return static_cast<unsigned char*>(data_); }
  size_t size() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace kiln::zoo
