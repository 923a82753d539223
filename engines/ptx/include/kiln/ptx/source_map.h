// Maps PTX lines to CUDA source positions through .file and .loc, and back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ptx/module.h"

namespace kiln::ptx {

struct SourcePosition {
  std::string file;   // the .file path
  uint32_t line = 0;  // 0: compiler-generated code with no source line (.loc 1 0 0)
  uint32_t column = 0;
  std::string function;  // the inlined function (mangled), from .debug_str, when given
  // Where that function was inlined, outermost last: each call site as file:line:col.
  std::vector<SourcePosition> inlined_at;

  bool operator==(const SourcePosition&) const = default;
};

struct SourceMapEntry {
  uint32_t ptx_line = 0;
  uint32_t function = 0;  // index into Module::functions
  InstructionId instruction = 0;
  SourcePosition position;
};

class SourceMap {
 public:
  // One entry per instruction that has a .loc in effect.
  static SourceMap build(const Module& module);

  // The source position of the instruction on PTX line `ptx_line`; for a line that holds no
  // instruction, that of the nearest instruction above it in the same function.
  std::optional<SourcePosition> at_ptx_line(uint32_t ptx_line) const;
  // The PTX lines whose instructions came from `file`:`line` (the file compared by suffix, so
  // "kernel.cu" matches "/work/x/kernel.cu"), innermost position or any inlining call site.
  std::vector<uint32_t> ptx_lines_for(std::string_view file, uint32_t line) const;

  const std::vector<SourceMapEntry>& entries() const { return entries_; }

 private:
  std::vector<SourceMapEntry> entries_;                         // sorted by ptx_line
  std::vector<std::pair<uint32_t, uint32_t>> function_ranges_;  // ptx line span per function
};

// "kernel.cu:42:7" or "kernel.cu:42:7 (inlined into main.cu:10:3)".
std::string to_string(const SourcePosition& position);

}  // namespace kiln::ptx
