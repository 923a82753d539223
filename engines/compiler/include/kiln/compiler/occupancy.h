// Theoretical occupancy: how many blocks of a kernel fit on one SM at once, and which
// resource stops more from fitting. The rules are those of the CUDA occupancy calculator
// (cuda_occupancy.h in the toolkit): registers are allocated per warp in units of 256 and
// split over 4 sub-partitions; shared memory per block is the kernel's static plus dynamic
// bytes plus 1 KB the driver reserves (sm_80 and later), rounded up to 128 bytes; warps,
// blocks and barriers per SM are capped.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "kiln/base/result.h"

namespace kiln::compiler {

// One SM's limits. kb/hw's GPU specs fill the measured fields; the allocation rules come
// from the compute capability (sm_limits_for_arch).
struct SmLimits {
  std::string source;  // where the numbers came from: "kb/hw/h200_sxm.json", "built-in sm_90"
  int warp_size = 32;
  int max_threads_per_sm = 2048;
  int max_threads_per_block = 1024;
  int max_blocks_per_sm = 32;
  int64_t registers_per_sm = 65536;
  int64_t registers_per_block = 65536;
  int max_registers_per_thread = 255;
  int register_allocation_unit = 256;  // registers, allocated per warp
  int register_sub_partitions = 4;
  int64_t smem_per_sm_bytes = 233472;            // 228 KB on sm_90
  int64_t smem_per_block_default_bytes = 49152;  // 48 KB without the opt-in attribute
  int64_t smem_per_block_optin_bytes = 232448;   // 227 KB with it
  int64_t smem_reserved_per_block_bytes = 1024;
  int smem_allocation_unit = 128;
  int barriers_per_block_slot = 2;  // named-barrier sets per block slot: sm_90 has 2 x 32

  int max_warps_per_sm() const { return max_threads_per_sm / warp_size; }
};

// The CUDA occupancy calculator's table for a compute capability (sm_80, sm_86, sm_89,
// sm_90, sm_100, sm_120); an error for architectures it does not know.
Result<SmLimits> sm_limits_for_arch(const std::string& arch);

struct KernelUsage {
  int block_size = 256;  // threads per block
  int registers = 0;     // per thread, from ptxas
  int64_t static_smem_bytes = 0;
  int64_t dynamic_smem_bytes = 0;
  int barriers = 0;  // named barriers the kernel uses (ptxas "used N barriers")
};

struct Occupancy {
  int blocks_per_sm = 0;
  int active_warps = 0;  // per SM
  int max_warps = 0;     // per SM
  double percent = 0;    // active_warps / max_warps x 100
  std::string limiter;   // "registers" | "shared_memory" | "warps" | "blocks" | "barriers"
  // Blocks per SM allowed by each resource alone.
  int by_registers = 0, by_shared_memory = 0, by_warps = 0, by_blocks = 0, by_barriers = 0;
  int64_t smem_per_block_bytes = 0;  // allocated: static + dynamic + reserved, rounded up
  int registers_per_block = 0;       // allocated
  std::string problem;  // when blocks_per_sm is 0: why the block cannot launch, what to change

  nlohmann::json to_json() const;
};

Occupancy compute_occupancy(const KernelUsage& usage, const SmLimits& limits);

}  // namespace kiln::compiler
