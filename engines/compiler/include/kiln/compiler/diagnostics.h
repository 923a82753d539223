// Compiler messages from an nvcc run, as file:line:column diagnostics with the source line:
// the CUDA front end (`kernel.cu(42): error: ...` with nvcc's quote and caret), the host
// compiler (gcc's `kernel.cu:42:7: error: ...`), ptxas (`ptxas error   : ...`, or with a PTX
// line: `ptxas kernel.ptx, line 61; error   : ...`) and the nvcc driver (`nvcc fatal   : ...`).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kiln::compiler {

struct Diagnostic {
  std::string severity;     // "error" | "warning" (fatal and catastrophic errors are "error")
  std::string tool;         // "nvcc" (CUDA front end and driver) | "host" (gcc) | "ptxas"
  std::string file;         // as the compiler named it; empty when no file was given
  int line = 0;             // 1-based; 0: unknown
  int column = 0;           // 1-based; 0: unknown
  std::string code;         // the front end's number ("177-D"), when given
  std::string message;      // the text, with continuation lines joined by "; "
  std::string source_line;  // the quoted line of `file`, when known
  int ptx_line = 0;         // ptxas messages about the PTX: the PTX line they named

  bool is_error() const { return severity == "error"; }
  // "kernel.cu:42:7: error #20: message" and, on the next line, the source line.
  std::string to_string() const;
  nlohmann::json to_json() const;
  static Diagnostic from_json(const nlohmann::json& j);
};

// The text of a file a diagnostic names, when it can be read; nullopt otherwise.
using SourceReader = std::function<std::optional<std::string>(const std::string& file)>;

// Every error and warning in `output` (ptxas info lines and summaries are left out). Source
// lines come from the compiler's own quote when it gave one, else from `read_source`.
std::vector<Diagnostic> parse_diagnostics(const std::string& output,
                                          const SourceReader& read_source = {});

// Line `line` (1-based) of `text`, without its newline; empty when out of range.
std::string line_of(const std::string& text, int line);

}  // namespace kiln::compiler
