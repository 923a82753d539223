// The symbols a shared object defines and references, and the libraries it needs,
// read straight from its ELF tables (.dynsym, .symtab, .dynamic) rather than by
// parsing `nm -D`, so the check has no tool dependency and cannot be fooled by a
// symbol name that looks like nm's output format.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::compiler {

struct ElfSymbol {
  std::string name;      // as stored (mangled for C++)
  bool defined = false;  // false: an undefined reference resolved at load time
  bool dynamic = false;  // from .dynsym (else .symtab)
};

struct ElfSymbols {
  std::vector<ElfSymbol> symbols;
  std::vector<std::string> needed;  // DT_NEEDED entries, e.g. "libcudart.so.13"
};

class ElfReader {
 public:
  // 64-bit little-endian ELF only (what nvcc and g++ produce on x86-64 and aarch64).
  // Errors say what is malformed (truncated header, section past the end, ...).
  static Result<ElfSymbols> read(const std::filesystem::path& path);
  static Result<ElfSymbols> parse(const std::string& bytes);
};

}  // namespace kiln::compiler
