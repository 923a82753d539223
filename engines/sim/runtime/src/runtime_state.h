// RuntimeState: everything the simulated CUDA runtime remembers between calls.
//
// A cudart replacement cannot take its configuration through a constructor: candidate code
// calls free C functions (cudaMalloc, __cudaRegisterFunction from a static constructor, ...).
// So the library owns exactly one RuntimeState, created on first use by RuntimeState::get()
// and never destroyed (atexit handlers of candidate objects still call
// __cudaUnregisterFatBinary after static destructors would have run). Its options come from
// the environment when the simulated device is first created (KILN_SIM_INSTRUCTION_BUDGET,
// KILN_SIM_TIME_LIMIT, KILN_SIM_ITS; see README.md). Every entry point holds `mutex`.
//
// The last error is per host thread, as in the real runtime (error_state.h); the sticky error
// of a faulted launch belongs to the (single) simulated context and is kept here.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kiln/sim/device.h"

namespace kiln::sim::runtime {

// One registered fat binary (one translation unit of candidate code).
struct ModuleRecord {
  std::string name;                    // for messages: "module 1"
  std::string ptx;                     // extracted at registration
  std::string ptx_error;               // why there is no PTX (reported at first use)
  std::optional<ModuleHandle> handle;  // loaded into the device on first use
  bool unregistered = false;
};

// A __global__ function, found by its host stub's address or by the cudaKernel_t handle the
// runtime gave out (which is the address of this record).
struct FunctionRecord {
  ModuleRecord* module = nullptr;
  std::string device_name;  // mangled, as in the PTX
  const void* host_function = nullptr;
  // cudaFuncSetAttribute values; nullopt: the default.
  std::optional<uint32_t> max_dynamic_shared;
  int preferred_carveout = -1;
  bool non_portable_cluster = false;
  Dim3 required_cluster{0, 0, 0};  // cudaFuncAttributeRequiredClusterWidth/Height/Depth
};

// A __device__ or __constant__ variable (cudaMemcpyToSymbol and friends).
struct VariableRecord {
  ModuleRecord* module = nullptr;
  std::string device_name;
  size_t bytes = 0;
  bool constant = false;
};

struct StreamRecord {
  unsigned flags = 0;
  int priority = 0;
  // cudaStreamSetAttribute values: stored and read back, no effect on the simulation.
  cudaAccessPolicyWindow access_policy{};
  // -1 until set: what an H200 with CUDA 13 reads back for a stream never given a policy.
  cudaSynchronizationPolicy sync_policy = static_cast<cudaSynchronizationPolicy>(-1);
};

// An allocation this process exported with cudaIpcGetMemHandle (ipc_memory.h).
struct IpcExport {
  std::string name;  // of its shared-memory object
  cudaIpcMemHandle_t handle{};
};

// A shared-memory object this process opened with cudaIpcOpenMemHandle.
struct IpcImport {
  std::string name;
  size_t bytes = 0;
  int opens = 0;  // cudaIpcOpenMemHandle calls not yet closed
};

// Pinned host memory (cudaMallocHost, cudaHostAlloc); mapped into the device on the first
// cudaHostGetDevicePointer (0 until then, and again after cudaDeviceReset).
struct HostAllocation {
  void* host = nullptr;
  size_t bytes = 0;
  uint64_t device_address = 0;
};

struct EventRecord {
  unsigned flags = 0;
  bool recorded = false;
  uint64_t tick = 0;  // the logical clock when recorded (see README: events never claim time)
};

class RuntimeState {
 public:
  static RuntimeState& get();

  std::recursive_mutex mutex;

  // The simulated device, created on first use with options from the environment.
  Device& device();
  bool has_device() const { return device_ != nullptr; }
  // cudaDeviceReset: drops the device (memory, loaded modules) and the sticky error.
  void reset_device();

  // Registration.
  ModuleRecord* add_module(std::string ptx, std::string ptx_error);
  FunctionRecord* add_function(ModuleRecord* module, const void* host_function,
                               std::string device_name);
  void add_variable(ModuleRecord* module, const void* host_variable, std::string device_name,
                    size_t bytes, bool constant);
  void remove_module(ModuleRecord* module);

  // A host stub address or a cudaKernel_t this runtime handed out; nullptr if neither.
  FunctionRecord* find_function(const void* function);
  VariableRecord* find_variable(const void* host_variable);
  // Loads the module's PTX into the device on first use; the error says why it cannot run.
  Result<ModuleHandle> module_handle(ModuleRecord& module);

  // Device memory owned by cudaMalloc: base address -> size.
  std::map<uint64_t, size_t> allocations;
  // Device ranges of module variables, learned through symbol lookups: base -> size.
  std::map<uint64_t, size_t> symbol_ranges;
  // Device ranges whose bytes live outside the simulator: IPC-opened objects and mapped host
  // memory. Not freed by cudaFree.
  std::map<uint64_t, size_t> mapped_ranges;
  // CUDA IPC: exported allocations by base, opened objects by their device base.
  std::map<uint64_t, IpcExport> ipc_exports;
  std::map<uint64_t, IpcImport> ipc_imports;
  // The process that registered the atexit handler unlinking exported objects (0: none); a
  // forked child inherits the state but must not unlink its parent's objects.
  int ipc_cleanup_pid = 0;
  // Bases of allocations from cudaMallocAsync (pool memory, which IPC cannot export).
  std::set<uint64_t> pool_allocations;
  // Pinned host memory by host address.
  std::map<uintptr_t, HostAllocation> host_allocations;
  // The allocation or symbol range holding [address, address+bytes); nullopt if none does.
  std::optional<std::pair<uint64_t, size_t>> device_range(uint64_t address, size_t bytes) const;
  // Whether the address lies in any device range (for cudaMemcpyDefault).
  bool is_device_address(uint64_t address) const;

  std::unordered_map<const void*, std::unique_ptr<StreamRecord>> streams;
  std::unordered_map<const void*, std::unique_ptr<EventRecord>> events;
  bool is_valid_stream(cudaStream_t stream) const;
  // The record holding a stream's settings (the default stream's for 0, cudaStreamLegacy and
  // cudaStreamPerThread); nullptr for a stream that does not exist.
  StreamRecord* stream_record(cudaStream_t stream);
  StreamRecord default_stream;

  // Device settings a program can change and read back; cudaDeviceReset restores them.
  // cudaLimitPersistingL2CacheSize; nullopt: the device's default (device_properties.h).
  std::optional<size_t> persisting_l2_bytes;
  cudaFuncCache cache_config = cudaFuncCachePreferNone;

  int current_device = 0;
  cudaError_t sticky_error = cudaSuccess;
  uint64_t clock = 0;  // counts launches and copies; the time base of events

  // Device printf. printf_fifo_bytes is what a launch may print
  // (cudaDeviceSetLimit(cudaLimitPrintfFifoSize)). As CUDA prints its printf FIFO to stdout at
  // synchronization points (a launch, a device/stream/event synchronize, a blocking copy, a
  // stream callback, cudaDeviceReset; not at exit), launches' output waits in printf_pending
  // until flush_printf. printf_output keeps the output since the last kiln_sim_clear_report for
  // the driver, up to kMaxReportedPrintf bytes; printf_dropped_bytes counts what it lacks.
  static constexpr size_t kDefaultPrintfFifo = size_t{1} << 20;
  static constexpr size_t kMaxReportedPrintf = size_t{1} << 20;
  size_t printf_fifo_bytes = kDefaultPrintfFifo;
  std::string printf_pending;
  uint64_t printf_pending_dropped = 0;
  std::string printf_output;
  uint64_t printf_dropped_bytes = 0;
  void add_printf(const LaunchReport& report);
  // Writes the pending output to stdout, and to stderr a note of what did not fit in the FIFO.
  void flush_printf();

  // What the driver (kiln-sim-run) reads back: a detailed message for every error returned,
  // one entry per kernel launch, and the faults of the last faulted launch.
  std::vector<std::string> diagnostics;
  nlohmann::json launches = nlohmann::json::array();
  nlohmann::json last_faults = nlohmann::json::array();
  void add_diagnostic(std::string message);

 private:
  RuntimeState() = default;

  std::unique_ptr<Device> device_;
  std::vector<std::unique_ptr<ModuleRecord>> modules_;
  std::unordered_map<const void*, std::unique_ptr<FunctionRecord>> functions_;
  std::unordered_set<const void*> kernel_handles_;
  std::unordered_map<const void*, VariableRecord> variables_;
};

// Device pointers are simulated addresses carried in host pointer types.
inline uint64_t address_of(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer); }
inline void* pointer_of(uint64_t address) { return reinterpret_cast<void*>(address); }

}  // namespace kiln::sim::runtime
