// A loaded PTX module: the parsed IR, its source map, where its .global/.const variables live
// in device memory, and each kernel decoded into a Program (decoded on first use).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>

#include "decoder.h"
#include "global_memory.h"
#include "kiln/base/result.h"
#include "kiln/ptx/module.h"
#include "kiln/ptx/source_map.h"
#include "kiln/sim/device.h"

namespace kiln::sim {

class ModuleImage {
 public:
  // Parses `ptx_text` and places its variables (with initializers) in `memory`.
  static Result<std::unique_ptr<ModuleImage>> load(std::string_view ptx_text, std::string_view name,
                                                   GlobalMemory& memory);

  Result<KernelInfo> kernel_info(std::string_view kernel) const;
  // The decoded kernel, decoded once.
  Result<const Program*> program(std::string_view kernel);
  Result<uint64_t> symbol_address(std::string_view symbol) const;
  // "kernel.cu:42:7" for a PTX line, or "" without line info.
  std::string source_of(uint32_t ptx_line) const;
  const std::string& name() const { return name_; }

 private:
  const ptx::Function* find_kernel(std::string_view kernel) const;

  std::string name_;
  ptx::Module module_;
  ptx::SourceMap source_map_;
  SymbolTable globals_;
  std::unordered_map<std::string, std::unique_ptr<Program>> programs_;
};

}  // namespace kiln::sim
