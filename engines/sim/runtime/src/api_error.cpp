// Error queries: cudaGetLastError, cudaPeekAtLastError, cudaGetErrorName, cudaGetErrorString.
#include <cuda_runtime_api.h>

#include <mutex>

#include "error_state.h"
#include "runtime_state.h"

namespace rt = kiln::sim::runtime;

extern "C" {

cudaError_t cudaGetLastError(void) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  return rt::take_last_error();
}

cudaError_t cudaPeekAtLastError(void) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  return rt::peek_last_error();
}

const char* cudaGetErrorName(cudaError_t error) { return rt::error_name(error); }

const char* cudaGetErrorString(cudaError_t error) { return rt::error_description(error); }

}  // extern "C"
