// CUDA IPC entry points: device memory shared with another process (ipc_memory.h does the
// work).
#include <cuda_runtime_api.h>

#include <mutex>

#include "ipc_memory.h"
#include "runtime_state.h"

namespace rt = kiln::sim::runtime;

extern "C" {

cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t* handle, void* devPtr) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  return rt::ipc_export(state, handle, devPtr);
}

cudaError_t cudaIpcOpenMemHandle(void** devPtr, cudaIpcMemHandle_t handle, unsigned int flags) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  return rt::ipc_open(state, devPtr, handle, flags);
}

cudaError_t cudaIpcCloseMemHandle(void* devPtr) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  return rt::ipc_close(state, devPtr);
}

}  // extern "C"
