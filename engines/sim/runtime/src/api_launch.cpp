// Kernel launch entry points: the <<<>>> pair (__cudaPushCallConfiguration, then the stub's
// __cudaPopCallConfiguration and __cudaLaunchKernel), cudaLaunchKernel and cudaLaunchKernelExC.
#include <cuda_runtime_api.h>

#include <vector>

#include "error_state.h"
#include "kernel_launcher.h"
#include "runtime_state.h"

namespace kiln::sim::runtime {
namespace {

struct CallConfiguration {
  dim3 grid, block;
  size_t shared = 0;
  cudaStream_t stream = nullptr;
};

// <<<>>> pushes, the launch stub pops; per host thread, nested for launches in arguments.
thread_local std::vector<CallConfiguration> call_configurations;

cudaError_t launch_locked(LaunchRequest request) {
  auto& state = RuntimeState::get();
  std::lock_guard lock(state.mutex);
  return launch_kernel(state, request);
}

cudaError_t launch(const void* function, dim3 grid, dim3 block, void** args, size_t shared,
                   cudaStream_t stream) {
  LaunchRequest request;
  request.function = function;
  request.grid = grid;
  request.block = block;
  request.args = args;
  request.dynamic_shared = shared;
  request.stream = stream;
  return launch_locked(request);
}

cudaError_t launch_ex(const cudaLaunchConfig_t* config, const void* function, void** args) {
  if (config == nullptr) {
    auto& state = RuntimeState::get();
    std::lock_guard lock(state.mutex);
    return fail(cudaErrorInvalidValue, "cudaLaunchKernelEx: config is null");
  }
  LaunchRequest request;
  request.function = function;
  request.grid = config->gridDim;
  request.block = config->blockDim;
  request.dynamic_shared = config->dynamicSmemBytes;
  request.stream = config->stream;
  request.args = args;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const cudaLaunchAttribute& attribute = config->attrs[i];
    switch (attribute.id) {
      case cudaLaunchAttributeClusterDimension:
        request.cluster = Dim3{attribute.val.clusterDim.x, attribute.val.clusterDim.y,
                               attribute.val.clusterDim.z};
        request.cluster_set = true;
        break;
      case cudaLaunchAttributeLaunchCompletionEvent:
        request.completion_event = attribute.val.launchCompletionEvent.event;
        break;
      // Hints and orderings with no effect when launches run one after another to the end.
      case cudaLaunchAttributeIgnore:
      case cudaLaunchAttributeAccessPolicyWindow:
      case cudaLaunchAttributeCooperative:
      case cudaLaunchAttributeClusterSchedulingPolicyPreference:
      case cudaLaunchAttributeProgrammaticStreamSerialization:
      case cudaLaunchAttributeProgrammaticEvent:
      case cudaLaunchAttributePriority:
      case cudaLaunchAttributeMemSyncDomainMap:
      case cudaLaunchAttributeMemSyncDomain:
      case cudaLaunchAttributePreferredClusterDimension:
      case cudaLaunchAttributePreferredSharedMemoryCarveout:
        break;
      default: {
        auto& state = RuntimeState::get();
        std::lock_guard lock(state.mutex);
        return fail(cudaErrorInvalidValue,
                    "cudaLaunchKernelEx: launch attribute " +
                        std::to_string(static_cast<int>(attribute.id)) +
                        " is not valid for a kernel launch or not supported by the simulator");
      }
    }
  }
  return launch_locked(request);
}

}  // namespace
}  // namespace kiln::sim::runtime

namespace rt = kiln::sim::runtime;

extern "C" {

unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                     struct CUstream_st* stream) {
  rt::call_configurations.push_back({gridDim, blockDim, sharedMem, stream});
  return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem,
                                       void* stream) {
  if (rt::call_configurations.empty()) {
    auto& state = rt::RuntimeState::get();
    std::lock_guard lock(state.mutex);
    return rt::fail(cudaErrorInvalidConfiguration,
                    "a kernel stub ran without a <<<>>> configuration");
  }
  const rt::CallConfiguration config = rt::call_configurations.back();
  rt::call_configurations.pop_back();
  *gridDim = config.grid;
  *blockDim = config.block;
  *sharedMem = config.shared;
  *static_cast<cudaStream_t*>(stream) = config.stream;
  return cudaSuccess;
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                               size_t sharedMem, cudaStream_t stream) {
  return rt::launch(kernel, gridDim, blockDim, args, sharedMem, stream);
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                                    size_t sharedMem, cudaStream_t stream) {
  return rt::launch(kernel, gridDim, blockDim, args, sharedMem, stream);
}

cudaError_t cudaLaunchKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                             size_t sharedMem, cudaStream_t stream) {
  return rt::launch(func, gridDim, blockDim, args, sharedMem, stream);
}

cudaError_t cudaLaunchKernel_ptsz(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                  size_t sharedMem, cudaStream_t stream) {
  return rt::launch(func, gridDim, blockDim, args, sharedMem, stream);
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args) {
  return rt::launch_ex(config, func, args);
}

cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* config, const void* func,
                                     void** args) {
  return rt::launch_ex(config, func, args);
}

// Grid-wide synchronisation needs every block resident at once; the simulator runs blocks in
// turn, so a grid.sync() shows up as a deadlock fault rather than a hang.
cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                        size_t sharedMem, cudaStream_t stream) {
  return rt::launch(func, gridDim, blockDim, args, sharedMem, stream);
}

}  // extern "C"
