// What `nvcc -Xptxas -v` says about each kernel: registers, spills, stack, shared memory.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kiln::compiler {

struct KernelResources {
  std::string name;     // demangled
  std::string mangled;  // as in the PTX (.entry name)
  std::string arch;     // "sm_90a"
  int registers = 0;
  int64_t spill_stores = 0;  // bytes
  int64_t spill_loads = 0;   // bytes
  int64_t stack_bytes = 0;
  int64_t smem_bytes = 0;  // static shared memory
  int barriers = 0;        // named barriers used (bar.sync ids)
};

struct PtxasReport {
  std::vector<KernelResources> kernels;

  int max_registers() const;
  int64_t total_spill_bytes() const;  // stores + loads over every kernel
  nlohmann::json to_json() const;

  // The kernel with this mangled (PTX) name, or nullptr.
  const KernelResources* find(const std::string& mangled) const;

  static PtxasReport parse(const std::string& nvcc_output);
};

}  // namespace kiln::compiler
