// What nvcc's host code calls from a static constructor and an atexit handler: fat binary,
// function and variable registration (crt/host_runtime.h in the toolkit declares them).
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "error_state.h"
#include "fat_binary.h"
#include "runtime_state.h"

namespace kiln::sim::runtime {
namespace {

// The PTX of a registered fat binary, or the side file named by KILN_SIM_PTX when the fat
// binary carries none (README.md, "Getting the PTX").
std::pair<std::string, std::string> registered_ptx(const void* wrapper) {
  std::string error;
  auto entries = parse_fatbin_wrapper(wrapper);
  if (entries) {
    auto ptx = extract_ptx(*entries);
    if (ptx) return {std::move(*ptx), ""};
    error = ptx.error().message;
  } else {
    error = entries.error().message;
  }
  if (const char* path = std::getenv("KILN_SIM_PTX"); path != nullptr && *path != '\0') {
    std::ifstream in(path, std::ios::binary);
    if (!in) return {"", error + "; KILN_SIM_PTX names " + path + ", which cannot be read"};
    std::ostringstream text;
    text << in.rdbuf();
    return {text.str(), ""};
  }
  return {"", error};
}

}  // namespace
}  // namespace kiln::sim::runtime

using kiln::sim::runtime::ModuleRecord;
using kiln::sim::runtime::RuntimeState;

extern "C" {

void** __cudaRegisterFatBinary(void* fatCubin) {
  auto& state = RuntimeState::get();
  std::lock_guard lock(state.mutex);
  auto [ptx, error] = kiln::sim::runtime::registered_ptx(fatCubin);
  // The handle nvcc stores and passes back is the module record itself.
  return reinterpret_cast<void**>(state.add_module(std::move(ptx), std::move(error)));
}

void __cudaRegisterFatBinaryEnd(void** /*fatCubinHandle*/) {}

void __cudaUnregisterFatBinary(void** fatCubinHandle) {
  if (fatCubinHandle == nullptr) return;
  auto& state = RuntimeState::get();
  std::lock_guard lock(state.mutex);
  state.remove_module(reinterpret_cast<ModuleRecord*>(fatCubinHandle));
}

void __cudaRegisterFunction(void** fatCubinHandle, const char* hostFun, char* /*deviceFun*/,
                            const char* deviceName, int /*thread_limit*/, uint3* /*tid*/,
                            uint3* /*bid*/, dim3* /*bDim*/, dim3* /*gDim*/, int* /*wSize*/) {
  if (fatCubinHandle == nullptr || hostFun == nullptr || deviceName == nullptr) return;
  auto& state = RuntimeState::get();
  std::lock_guard lock(state.mutex);
  state.add_function(reinterpret_cast<ModuleRecord*>(fatCubinHandle), hostFun, deviceName);
}

void __cudaRegisterVar(void** fatCubinHandle, char* hostVar, char* /*deviceAddress*/,
                       const char* deviceName, int /*ext*/, size_t size, int constant,
                       int /*global*/) {
  if (fatCubinHandle == nullptr || hostVar == nullptr || deviceName == nullptr) return;
  auto& state = RuntimeState::get();
  std::lock_guard lock(state.mutex);
  state.add_variable(reinterpret_cast<ModuleRecord*>(fatCubinHandle), hostVar, deviceName, size,
                     constant != 0);
}

void __cudaRegisterManagedVar(void** /*fatCubinHandle*/, void** /*hostVarPtrAddress*/,
                              char* /*deviceAddress*/, const char* deviceName, int /*ext*/,
                              size_t /*size*/, int /*constant*/, int /*global*/) {
  auto& state = RuntimeState::get();
  std::lock_guard lock(state.mutex);
  state.add_diagnostic(std::string("__managed__ variable ") + (deviceName ? deviceName : "?") +
                       " is not supported by the simulator; use cudaMalloc and cudaMemcpy");
}

// Managed-runtime initialisation of a module; nothing to do without managed memory.
char __cudaInitModule(void** /*fatCubinHandle*/) { return 1; }

// The launch stub's cached handle (CUDA 12.8+ host code): the record of the function.
cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* hostFun) {
  auto& state = RuntimeState::get();
  std::lock_guard lock(state.mutex);
  if (kernel == nullptr) return kiln::sim::runtime::fail(cudaErrorInvalidValue, "null kernel");
  auto* function = state.find_function(hostFun);
  *kernel = reinterpret_cast<cudaKernel_t>(function);
  if (function == nullptr)
    return kiln::sim::runtime::fail(cudaErrorInvalidDeviceFunction,
                                    "__cudaGetKernel: not a registered __global__ function");
  return cudaSuccess;
}

cudaError_t cudaGetKernel(cudaKernel_t* kernelPtr, const void* entryFuncAddr) {
  return __cudaGetKernel(kernelPtr, entryFuncAddr);
}

cudaError_t cudaGetFuncBySymbol(cudaFunction_t* functionPtr, const void* symbolPtr) {
  return __cudaGetKernel(reinterpret_cast<cudaKernel_t*>(functionPtr), symbolPtr);
}

}  // extern "C"
