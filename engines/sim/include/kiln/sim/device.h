// The simulated GPU: device memory, loaded PTX modules and kernel launches, all on the CPU.
// This is the one interface between the simulator core (engines/sim/src) and the simulated CUDA
// runtime (engines/sim/runtime) that candidate host code links against instead of libcudart.
//
// Device addresses are 64-bit numbers in a simulated global address space (never host
// pointers); copy_to_device/copy_to_host move bytes across. Every call that can fail returns a
// Result whose message says what was wrong and what to do, in the words a CUDA programmer uses
// (e.g. "launch needs 70000 bytes of shared memory; the limit is 49152 without
// cudaFuncSetAttribute(MaxDynamicSharedMemorySize)").
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::sim {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

// Properties of the simulated device; the defaults are an H200 (sm_90a).
struct DeviceProperties {
  std::string name = "kiln simulated NVIDIA H200";
  int major = 9, minor = 0;
  int multiprocessor_count = 132;
  uint64_t global_memory_bytes = 4ull << 30;     // what the simulator lets a program allocate
  uint32_t shared_memory_per_block = 48 * 1024;  // without opt-in
  uint32_t shared_memory_per_block_optin = 227 * 1024;  // with cudaFuncSetAttribute
  uint32_t shared_memory_per_multiprocessor = 228 * 1024;
  uint32_t registers_per_block = 65536;
  uint32_t max_threads_per_block = 1024;
  Dim3 max_block_dim{1024, 1024, 64};
  Dim3 max_grid_dim{2147483647u, 65535, 65535};
  uint32_t warp_size = 32;
  uint32_t l2_cache_bytes = 60 * 1024 * 1024;
  uint32_t clock_rate_khz = 1980000;
  uint32_t memory_clock_rate_khz = 3201000;
  uint32_t memory_bus_width_bits = 6144;
  uint32_t max_threads_per_multiprocessor = 2048;
  uint32_t cluster_launch = 1;
};

class MemoryObserver;  // memory_observer.h

struct SimulatorOptions {
  // Stop a launch after this many warp-instructions (0: no limit) or this much wall time.
  uint64_t instruction_budget = 2'000'000'000ull;
  double time_limit_seconds = 120.0;
  // Independent thread scheduling: lanes of a warp may run apart (Volta+ semantics) instead of
  // the post-dominator reconvergence stack.
  bool independent_thread_scheduling = false;
  // Sees every shared/global access and synchronization event (race detection); not owned.
  MemoryObserver* observer = nullptr;
};

// A kernel parameter as the PTX .entry declares it: where its bytes go in the parameter buffer.
struct ParamSlot {
  std::string name;
  uint32_t offset = 0;  // into the packed parameter buffer, aligned as PTX requires
  uint32_t size = 0;
  uint32_t align = 0;
};

struct KernelInfo {
  std::string name;  // mangled, as in the PTX
  std::vector<ParamSlot> params;
  uint32_t param_bytes = 0;          // size of the packed buffer
  uint32_t static_shared_bytes = 0;  // .shared variables the kernel uses
  uint32_t max_threads = 0;          // .maxntid product, 0 if none
  Dim3 required_block;               // .reqntid (0s if none)
  Dim3 cluster;                      // .reqnctapercluster / .explicitcluster (1s if none)
};

struct LaunchConfig {
  Dim3 grid, block;
  uint32_t dynamic_shared_bytes = 0;
  Dim3 cluster{1, 1, 1};  // cudaLaunchKernelEx cluster dimension attribute
  // Device printf text the launch keeps (CUDA's cudaLimitPrintfFifoSize, 1 MiB by default).
  uint64_t printf_buffer_bytes = uint64_t{1} << 20;
};

// What the simulator saw while running one launch: counts, never times.
struct LaunchStats {
  uint64_t warp_instructions = 0;
  uint64_t lane_instructions = 0;  // summed over active lanes
  // Instructions executed by class ("alu", "fp32", "fp16", "tensor", "load", "store", "atomic",
  // "barrier", "shuffle", "control", "async_copy", "other"), lane-weighted.
  std::vector<std::pair<std::string, uint64_t>> by_class;
  // Bytes moved per state space ("global", "shared", "local", "const", "param").
  std::vector<std::pair<std::string, uint64_t>> bytes_by_space;
  uint64_t shared_bank_conflicts = 0;  // extra wavefronts beyond one per shared access
  uint64_t divergent_branches = 0;     // branches where a warp's active lanes split
  double seconds = 0;                  // host wall time of the simulation
};

// Why a launch stopped early, with where: kind is one of "out_of_bounds", "misaligned",
// "unsupported_instruction", "budget", "time_limit", "trap", "deadlock", "barrier_divergence",
// "invalid_launch".
struct LaunchFault {
  std::string kind;
  std::string message;  // says what happened and what to do
  Dim3 block, thread;   // the first offending thread
  uint64_t address = 0;
  uint32_t ptx_line = 0;
  std::string source;  // "kernel.cu:42:7" when the PTX has line info
  std::string instruction;
};

struct LaunchReport {
  LaunchStats stats;
  std::vector<LaunchFault> faults;  // empty: the launch completed
  // What the kernel's printf calls printed, in the order the simulator ran the threads (lanes
  // of a warp in lane order), kept also when the launch faulted. Calls whose text did not fit
  // in LaunchConfig::printf_buffer_bytes are dropped whole; their bytes are counted here.
  std::string printf_output;
  uint64_t printf_dropped_bytes = 0;
  bool ok() const { return faults.empty(); }
};

using ModuleHandle = uint32_t;

// Host bytes that back device memory from outside the simulator: a shared-memory mapping
// (CUDA IPC) or a pinned host buffer (mapped host memory). `release` runs once, when the
// allocation is freed or the device destroyed.
struct ExternalBytes {
  uint8_t* data = nullptr;
  uint64_t size = 0;
  std::function<void()> release;
};

class Device {
 public:
  explicit Device(SimulatorOptions options = {}, DeviceProperties properties = {});
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceProperties& properties() const;

  // Global memory. Allocations are 256-byte aligned; freeing an unknown address is an error.
  Result<uint64_t> allocate(size_t bytes);
  Status free(uint64_t address);
  // A fresh device address whose loads and stores reach `bytes.data` itself, so a kernel's
  // writes are seen by whoever else maps those bytes. It does not count against
  // global_memory_bytes; free() unmaps it (running bytes.release).
  Result<uint64_t> map_external(ExternalBytes bytes, std::string_view label);
  // Moves the allocation based at `address` into `bytes` (of its size): its contents are
  // copied there, and every later access reaches them; free() runs bytes.release.
  Status move_to_external(uint64_t address, ExternalBytes bytes);
  Status copy_to_device(uint64_t destination, const void* source, size_t bytes);
  Status copy_to_host(void* destination, uint64_t source, size_t bytes);
  Status copy_on_device(uint64_t destination, uint64_t source, size_t bytes);
  Status fill(uint64_t destination, uint8_t value, size_t bytes);

  // Parses and decodes a PTX module (the text of a .ptx file). Its .global and .const
  // variables get device addresses; symbol_address finds them (cudaMemcpyToSymbol).
  Result<ModuleHandle> load_module(std::string_view ptx_text, std::string_view name = "module");
  Result<KernelInfo> kernel(ModuleHandle module, std::string_view kernel_name) const;
  Result<uint64_t> symbol_address(ModuleHandle module, std::string_view symbol) const;

  // Runs every CTA of the grid to completion (or to the first fault). `params` is the packed
  // parameter buffer laid out as KernelInfo::params says; a .param pointer is a device address.
  Result<LaunchReport> launch(ModuleHandle module, std::string_view kernel_name,
                              const LaunchConfig& config, const std::vector<std::byte>& params);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::sim
