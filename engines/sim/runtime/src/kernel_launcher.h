// One kernel launch through the simulator, from whichever entry point it came (<<<>>>,
// cudaLaunchKernel, cudaLaunchKernelEx): find the function, load its module, check the
// configuration as the real runtime does, pack the arguments, run, and turn faults into the
// CUDA error a GPU would have reported. Launches run to completion before the call returns, so
// every stream is trivially ordered.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "kiln/sim/device.h"
#include "runtime_state.h"

namespace kiln::sim::runtime {

struct LaunchRequest {
  const void* function = nullptr;  // host stub address or cudaKernel_t
  dim3 grid, block;
  size_t dynamic_shared = 0;
  cudaStream_t stream = nullptr;
  void** args = nullptr;
  Dim3 cluster{1, 1, 1};
  bool cluster_set = false;                // the launch carried a cluster-dimension attribute
  cudaEvent_t completion_event = nullptr;  // cudaLaunchAttributeLaunchCompletionEvent
};

// The caller holds state.mutex. Records the launch (and its faults) for the driver.
cudaError_t launch_kernel(RuntimeState& state, const LaunchRequest& request);

}  // namespace kiln::sim::runtime
