// Parses PTX text (as nvcc 13 emits it for sm_80 .. sm_90a, PTX ISA up to 9.0) into a Module.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/ptx/diagnostic.h"
#include "kiln/ptx/module.h"

namespace kiln::ptx {

struct ParseOptions {
  std::string source_name = "<ptx>";  // used in error messages: "kernel.ptx:12:5: error: ..."
};

struct ParsedModule {
  Module module;
  std::vector<Diagnostic> warnings;  // unknown opcodes and directives (kept, not fatal)
};

// The parser stops at the first error. `module` is empty then; `diagnostics` holds the
// warnings so far and the error (last).
struct ParseOutcome {
  std::optional<Module> module;
  std::vector<Diagnostic> diagnostics;
};

ParseOutcome parse_ptx_with_diagnostics(std::string_view text, const ParseOptions& options = {});

// The library boundary: never throws; an error's message is
// "<source_name>:<line>:<column>: error: <what was wrong, what was expected>".
Result<ParsedModule> parse_ptx(std::string_view text, const ParseOptions& options = {});

}  // namespace kiln::ptx
