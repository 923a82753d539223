// The GPU side of a differential case: the CUDA driver API only (cuInit, cuModuleLoadData,
// cuLaunchKernel, cuTensorMapEncodeTiled), so the binary needs nothing but libcuda.so.1.
#include <cuda.h>
#include <dlfcn.h>

#include <cstring>

#include "backend.h"

namespace kiln::simdiff {
namespace {

// libcuda.so.1 is opened at run time (dlopen), so --sim-only runs where there is no driver.
#define KILN_STR2(x) #x
#define KILN_STR(x) KILN_STR2(x)
struct Api {
  decltype(&::cuInit) cuInit = nullptr;
  decltype(&::cuDeviceGet) cuDeviceGet = nullptr;
  decltype(&::cuDeviceGetName) cuDeviceGetName = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) cuDevicePrimaryCtxRetain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease) cuDevicePrimaryCtxRelease = nullptr;
  decltype(&::cuCtxSetCurrent) cuCtxSetCurrent = nullptr;
  decltype(&::cuModuleLoadDataEx) cuModuleLoadDataEx = nullptr;
  decltype(&::cuModuleUnload) cuModuleUnload = nullptr;
  decltype(&::cuModuleGetFunction) cuModuleGetFunction = nullptr;
  decltype(&::cuFuncSetAttribute) cuFuncSetAttribute = nullptr;
  decltype(&::cuLaunchKernel) cuLaunchKernel = nullptr;
  decltype(&::cuCtxSynchronize) cuCtxSynchronize = nullptr;
  decltype(&::cuMemAlloc) cuMemAlloc = nullptr;
  decltype(&::cuMemFree) cuMemFree = nullptr;
  decltype(&::cuMemcpyHtoD) cuMemcpyHtoD = nullptr;
  decltype(&::cuMemcpyDtoH) cuMemcpyDtoH = nullptr;
  decltype(&::cuTensorMapEncodeTiled) cuTensorMapEncodeTiled = nullptr;
  decltype(&::cuGetErrorName) cuGetErrorName = nullptr;
  decltype(&::cuGetErrorString) cuGetErrorString = nullptr;

  std::string load() {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return std::string("cannot open libcuda.so.1: ") + dlerror();
    cuInit = reinterpret_cast<decltype(cuInit)>(dlsym(lib, KILN_STR(cuInit)));
    if (!cuInit) return "libcuda.so.1 lacks " KILN_STR(cuInit);
    cuDeviceGet = reinterpret_cast<decltype(cuDeviceGet)>(dlsym(lib, KILN_STR(cuDeviceGet)));
    if (!cuDeviceGet) return "libcuda.so.1 lacks " KILN_STR(cuDeviceGet);
    cuDeviceGetName =
        reinterpret_cast<decltype(cuDeviceGetName)>(dlsym(lib, KILN_STR(cuDeviceGetName)));
    if (!cuDeviceGetName) return "libcuda.so.1 lacks " KILN_STR(cuDeviceGetName);
    cuDevicePrimaryCtxRetain = reinterpret_cast<decltype(cuDevicePrimaryCtxRetain)>(
        dlsym(lib, KILN_STR(cuDevicePrimaryCtxRetain)));
    if (!cuDevicePrimaryCtxRetain) return "libcuda.so.1 lacks " KILN_STR(cuDevicePrimaryCtxRetain);
    cuDevicePrimaryCtxRelease = reinterpret_cast<decltype(cuDevicePrimaryCtxRelease)>(
        dlsym(lib, KILN_STR(cuDevicePrimaryCtxRelease)));
    if (!cuDevicePrimaryCtxRelease)
      return "libcuda.so.1 lacks " KILN_STR(cuDevicePrimaryCtxRelease);
    cuCtxSetCurrent =
        reinterpret_cast<decltype(cuCtxSetCurrent)>(dlsym(lib, KILN_STR(cuCtxSetCurrent)));
    if (!cuCtxSetCurrent) return "libcuda.so.1 lacks " KILN_STR(cuCtxSetCurrent);
    cuModuleLoadDataEx =
        reinterpret_cast<decltype(cuModuleLoadDataEx)>(dlsym(lib, KILN_STR(cuModuleLoadDataEx)));
    if (!cuModuleLoadDataEx) return "libcuda.so.1 lacks " KILN_STR(cuModuleLoadDataEx);
    cuModuleUnload =
        reinterpret_cast<decltype(cuModuleUnload)>(dlsym(lib, KILN_STR(cuModuleUnload)));
    if (!cuModuleUnload) return "libcuda.so.1 lacks " KILN_STR(cuModuleUnload);
    cuModuleGetFunction =
        reinterpret_cast<decltype(cuModuleGetFunction)>(dlsym(lib, KILN_STR(cuModuleGetFunction)));
    if (!cuModuleGetFunction) return "libcuda.so.1 lacks " KILN_STR(cuModuleGetFunction);
    cuFuncSetAttribute =
        reinterpret_cast<decltype(cuFuncSetAttribute)>(dlsym(lib, KILN_STR(cuFuncSetAttribute)));
    if (!cuFuncSetAttribute) return "libcuda.so.1 lacks " KILN_STR(cuFuncSetAttribute);
    cuLaunchKernel =
        reinterpret_cast<decltype(cuLaunchKernel)>(dlsym(lib, KILN_STR(cuLaunchKernel)));
    if (!cuLaunchKernel) return "libcuda.so.1 lacks " KILN_STR(cuLaunchKernel);
    cuCtxSynchronize =
        reinterpret_cast<decltype(cuCtxSynchronize)>(dlsym(lib, KILN_STR(cuCtxSynchronize)));
    if (!cuCtxSynchronize) return "libcuda.so.1 lacks " KILN_STR(cuCtxSynchronize);
    cuMemAlloc = reinterpret_cast<decltype(cuMemAlloc)>(dlsym(lib, KILN_STR(cuMemAlloc)));
    if (!cuMemAlloc) return "libcuda.so.1 lacks " KILN_STR(cuMemAlloc);
    cuMemFree = reinterpret_cast<decltype(cuMemFree)>(dlsym(lib, KILN_STR(cuMemFree)));
    if (!cuMemFree) return "libcuda.so.1 lacks " KILN_STR(cuMemFree);
    cuMemcpyHtoD = reinterpret_cast<decltype(cuMemcpyHtoD)>(dlsym(lib, KILN_STR(cuMemcpyHtoD)));
    if (!cuMemcpyHtoD) return "libcuda.so.1 lacks " KILN_STR(cuMemcpyHtoD);
    cuMemcpyDtoH = reinterpret_cast<decltype(cuMemcpyDtoH)>(dlsym(lib, KILN_STR(cuMemcpyDtoH)));
    if (!cuMemcpyDtoH) return "libcuda.so.1 lacks " KILN_STR(cuMemcpyDtoH);
    cuTensorMapEncodeTiled = reinterpret_cast<decltype(cuTensorMapEncodeTiled)>(
        dlsym(lib, KILN_STR(cuTensorMapEncodeTiled)));
    if (!cuTensorMapEncodeTiled) return "libcuda.so.1 lacks " KILN_STR(cuTensorMapEncodeTiled);
    cuGetErrorName =
        reinterpret_cast<decltype(cuGetErrorName)>(dlsym(lib, KILN_STR(cuGetErrorName)));
    if (!cuGetErrorName) return "libcuda.so.1 lacks " KILN_STR(cuGetErrorName);
    cuGetErrorString =
        reinterpret_cast<decltype(cuGetErrorString)>(dlsym(lib, KILN_STR(cuGetErrorString)));
    if (!cuGetErrorString) return "libcuda.so.1 lacks " KILN_STR(cuGetErrorString);
    return "";
  }
};
Api api;

std::string describe(CUresult r, const char* what) {
  const char* name = nullptr;
  const char* text = nullptr;
  api.cuGetErrorName(r, &name);
  api.cuGetErrorString(r, &text);
  return std::string(what) + ": " + (name ? name : "?") + " (" + (text ? text : "") + ")";
}

#define KILN_CU(call)                                           \
  do {                                                          \
    CUresult kiln_r = (call);                                   \
    if (kiln_r != CUDA_SUCCESS) return describe(kiln_r, #call); \
  } while (0)

class GpuBackend : public Backend {
 public:
  ~GpuBackend() override {
    reset();
    if (context_) api.cuDevicePrimaryCtxRelease(device_);
  }

  std::string init() {
    std::string e = api.load();
    if (!e.empty()) return e;
    KILN_CU(api.cuInit(0));
    CUdevice device = 0;
    KILN_CU(api.cuDeviceGet(&device, 0));
    char name[256] = {};
    KILN_CU(api.cuDeviceGetName(name, sizeof(name), device));
    name_ = name;
    KILN_CU(api.cuDevicePrimaryCtxRetain(&context_, device));
    device_ = device;
    KILN_CU(api.cuCtxSetCurrent(context_));
    return "";
  }

  std::string name() const override { return name_; }

  std::string load(const std::string& ptx, const std::string& label) override {
    if (module_) {
      api.cuModuleUnload(module_);
      module_ = nullptr;
    }
    char log[8192] = {};
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {log, reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof(log)))};
    CUresult r = api.cuModuleLoadDataEx(&module_, ptx.c_str(), 2, options, values);
    if (r != CUDA_SUCCESS) {
      module_ = nullptr;
      return describe(r, ("cuModuleLoadDataEx " + label).c_str()) + ": " + log;
    }
    return "";
  }
  std::string allocate(size_t bytes, uint64_t* address) override {
    CUdeviceptr p = 0;
    KILN_CU(api.cuMemAlloc(&p, bytes));
    allocations_.push_back(p);
    *address = p;
    return "";
  }
  std::string upload(uint64_t address, const void* data, size_t bytes) override {
    KILN_CU(api.cuMemcpyHtoD(address, data, bytes));
    return "";
  }
  std::string download(void* data, uint64_t address, size_t bytes) override {
    KILN_CU(api.cuMemcpyDtoH(data, address, bytes));
    return "";
  }
  std::string launch(const std::string& kernel, Dim grid, Dim block, uint32_t shared,
                     const Params& params) override {
    if (!module_) return "no module loaded";
    CUfunction f = nullptr;
    KILN_CU(api.cuModuleGetFunction(&f, module_, kernel.c_str()));
    if (shared > 48 * 1024) {
      KILN_CU(api.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     static_cast<int>(shared)));
    }
    // kernelParams (a pointer to each argument), not CU_LAUNCH_PARAM_BUFFER_POINTER: on an H200
    // (driver of 2026-11) a CUtensorMap passed in the packed `extra` buffer makes
    // cp.async.bulk.tensor fault with CUDA_ERROR_ILLEGAL_INSTRUCTION, while the same kernel,
    // cubin or PTX, runs correctly with kernelParams (checked by hand, 2026-11-29).
    std::vector<std::byte> buffer = params.bytes();
    std::vector<void*> args;
    for (size_t offset : params.offsets()) args.push_back(buffer.data() + offset);
    KILN_CU(api.cuLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, shared,
                               nullptr, args.empty() ? nullptr : args.data(), nullptr));
    KILN_CU(api.cuCtxSynchronize());
    return "";
  }
  std::string encode_map(const TiledMap& map, MapBytes* out) override {
    CUtensorMap m;
    cuuint64_t dims[5], strides[4];
    cuuint32_t box[5], estrides[5];
    for (uint32_t i = 0; i < map.rank; ++i) {
      dims[i] = map.global_dim[i];
      box[i] = map.box_dim[i];
      estrides[i] = map.element_strides[i];
      if (i > 0) strides[i - 1] = map.global_stride_bytes[i];
    }
    KILN_CU(api.cuTensorMapEncodeTiled(
        &m, static_cast<CUtensorMapDataType>(map.data_type), map.rank,
        reinterpret_cast<void*>(static_cast<uintptr_t>(map.global_address)), dims, strides, box,
        estrides, CU_TENSOR_MAP_INTERLEAVE_NONE, static_cast<CUtensorMapSwizzle>(map.swizzle),
        CU_TENSOR_MAP_L2_PROMOTION_NONE, static_cast<CUtensorMapFloatOOBfill>(map.oob_fill)));
    static_assert(sizeof(m) == sizeof(out->bytes));
    std::memcpy(out->bytes, &m, sizeof(m));
    return "";
  }
  void reset() override {
    for (CUdeviceptr p : allocations_) api.cuMemFree(p);
    allocations_.clear();
    if (module_) api.cuModuleUnload(module_);
    module_ = nullptr;
  }

 private:
  CUcontext context_ = nullptr;
  CUdevice device_ = 0;
  CUmodule module_ = nullptr;
  std::vector<CUdeviceptr> allocations_;
  std::string name_;
};

}  // namespace

std::unique_ptr<Backend> make_gpu_backend(std::string* error) {
  auto gpu = std::make_unique<GpuBackend>();
  std::string e = gpu->init();
  if (!e.empty()) {
    *error = e;
    return nullptr;
  }
  return gpu;
}

}  // namespace kiln::simdiff
