// GPU specifications from kb/hw/*.json, for % of peak and occupancy arithmetic.
// Every number in those files carries the source it came from.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::kb {

struct GpuSpec {
  std::string id;                  // file stem: "h200_sxm"
  std::string name;                // "NVIDIA H200 SXM"
  std::string arch;                // "sm_90a"
  std::string compute_capability;  // "9.0"
  int sms = 0;
  double boost_clock_mhz = 0;
  int64_t smem_per_sm_bytes = 0;
  int64_t smem_per_block_max_bytes = 0;  // with the opt-in attribute
  int64_t registers_per_sm = 0;          // 32-bit registers
  int registers_per_thread_max = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;  // resident blocks per SM; 0 when the file does not say
  int64_t l2_bytes = 0;
  int64_t hbm_bytes = 0;
  double hbm_bandwidth_gbps = 0;  // GB/s (10^9 bytes per second)
  std::map<std::string, double>
      tensor_dense_tflops;  // fp16, bf16, fp8, tf32, fp64 (dense, no sparsity)
  double fp32_tflops = 0;   // non-tensor
  double fp64_tflops = 0;   // non-tensor
  nlohmann::json document;  // the whole file, sources included

  // Dense peak for a dtype name as tasks spell it (f16/fp16, bf16, e4m3/fp8, tf32,
  // f32/fp32 (non-tensor), f64/fp64); 0 when unknown.
  double peak_tflops(const std::string& dtype) const;
};

// Parses one spec document; errors name the missing or unsourced field.
Result<GpuSpec> parse_gpu_spec(const nlohmann::json& document, const std::string& id);

// Finds `name` among hw_dir/*.json by id or alias, ignoring case, spaces, '-' and an
// "NVIDIA" prefix: "H200", "NVIDIA H200", "h200_sxm" all find h200_sxm.json.
Result<GpuSpec> load_gpu_spec(const std::filesystem::path& hw_dir, const std::string& name);
// The same in the default kb folder (default_kb_dir()/hw).
Result<GpuSpec> load_gpu_spec(const std::string& name);

std::vector<std::string> list_gpu_specs(const std::filesystem::path& hw_dir);

}  // namespace kiln::kb
