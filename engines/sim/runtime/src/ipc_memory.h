// CUDA IPC on the simulated device. A device allocation lives in host memory inside the
// simulator, so sharing it with another process means moving its bytes into memory both can
// map: cudaIpcGetMemHandle moves the allocation into a new POSIX shared-memory object
// (/dev/shm/kiln-sim-PID-RANDOM, mode 0600, 64 random bits so no other process guesses it) and
// writes the object's name and size into the handle (ipc_handle.h); cudaIpcOpenMemHandle in
// another process maps the object MAP_SHARED as an allocation of its own simulated device, so
// both processes' kernels and copies reach the same bytes; cudaIpcCloseMemHandle unmaps it.
// Freeing the exported allocation (or cudaDeviceReset, or exit) unlinks the object; mappings
// already opened stay valid until closed. A /dev/shm name rather than a memfd: the opening
// process may be confined (Landlock) so that it cannot reach another process's /proc folder,
// and a handle is bytes, not a file descriptor. The caller holds the state's mutex.
#pragma once

#include <cuda_runtime_api.h>

#include "runtime_state.h"

namespace kiln::sim::runtime {

cudaError_t ipc_export(RuntimeState& state, cudaIpcMemHandle_t* handle, void* pointer);
cudaError_t ipc_open(RuntimeState& state, void** pointer, const cudaIpcMemHandle_t& handle,
                     unsigned flags);
cudaError_t ipc_close(RuntimeState& state, void* pointer);

}  // namespace kiln::sim::runtime
