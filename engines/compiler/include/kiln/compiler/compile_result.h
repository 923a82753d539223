// What a compile of a candidate found: diagnostics, the PTX, and per kernel its resources
// (ptxas), launch bounds, theoretical occupancy and static instruction mix.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/compiler/diagnostics.h"
#include "kiln/compiler/instruction_mix.h"
#include "kiln/compiler/occupancy.h"

namespace kiln::compiler {

struct KernelReport {
  std::string name;       // the PTX .entry (mangled) name
  std::string demangled;  // "gemm(half const*, half const*, half*, int)"
  int registers = 0;      // per thread
  int64_t spill_store_bytes = 0;
  int64_t spill_load_bytes = 0;
  int64_t stack_bytes = 0;  // per-thread stack frame
  int64_t local_bytes = 0;  // per-thread local memory the kernel declares or spills to
  int64_t static_smem_bytes = 0;
  int64_t dynamic_smem_bytes = 0;  // as given for the occupancy estimate (not in the binary)
  int barriers = 0;                // named barriers used
  int max_threads = 0;             // .maxntid (__launch_bounds__) or .reqntid product; 0: none
  bool required_threads = false;   // .reqntid: every launch must use exactly max_threads
  int min_blocks_per_sm = 0;       // .minnctapersm (__launch_bounds__'s second value); 0: none
  int block_size = 0;              // the block size the occupancy is for
  std::string block_size_source;   // "reqntid" | "launch_bounds" | "argument" | "default"
  Occupancy occupancy;
  InstructionMix instruction_mix;
  bool has_instruction_mix = false;  // false when kiln could not parse the PTX

  nlohmann::json to_json() const;
  static KernelReport from_json(const nlohmann::json& j);
};

struct CompileResult {
  bool ok = false;          // nvcc succeeded: no errors
  bool cache_hit = false;   // served from the cache, nvcc not run
  double seconds = 0;       // this call, wall clock
  double nvcc_seconds = 0;  // the nvcc run (for a hit, the run that filled the entry)
  std::string key;          // the cache key (SHA-256)
  std::string arch;         // "sm_90a"
  std::string file_name;    // as shown in diagnostics
  std::vector<Diagnostic> diagnostics;
  std::vector<KernelReport> kernels;
  std::vector<std::string> notes;    // what kiln could not work out, and why
  std::string ptx;                   // the PTX ptxas assembled, with .loc lines (-lineinfo);
                                     // empty when the front end failed
  std::filesystem::path ptx_path;    // the same PTX in the cache (entry/kernel.ptx); empty if none
  std::filesystem::path cache_dir;   // the cache entry
  std::string log;                   // nvcc's whole output
  std::vector<std::string> command;  // the nvcc command (its paths were a scratch folder)

  int errors() const;
  int warnings() const;
  const KernelReport* find_kernel(const std::string& name) const;  // mangled or demangled

  // The cached form: everything but the per-call fields (seconds, cache_hit, occupancy
  // inputs), the PTX text and the paths.
  nlohmann::json to_json() const;
  static CompileResult from_json(const nlohmann::json& j);
};

}  // namespace kiln::compiler
