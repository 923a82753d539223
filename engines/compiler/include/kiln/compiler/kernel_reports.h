// Joins what ptxas reported per kernel with what the PTX says about it (launch bounds and
// the static instruction mix), and maps ptxas's PTX-line messages back to source lines.
#pragma once

#include <string_view>
#include <vector>

#include "kiln/compiler/compile_result.h"
#include "kiln/compiler/diagnostics.h"
#include "kiln/compiler/ptxas_report.h"
#include "kiln/ptx/module.h"

namespace kiln::compiler {

// One report per kernel: the PTX's kernels in their order when `module` is given (kernels
// ptxas did not report keep zero resources), else ptxas's.
std::vector<KernelReport> kernel_reports(const PtxasReport& ptxas, const ptx::Module* module);

// Diagnostics with a ptx_line get the source file, line and column of that PTX line (through
// its .loc), and the source line from `read_source`. Without a parsed `module` (PTX kiln's
// parser refused, such as inline asm that ptxas refuses too) the .loc lines of `ptx` are read.
void locate_ptx_diagnostics(std::vector<Diagnostic>& diagnostics, const ptx::Module* module,
                            std::string_view ptx, const SourceReader& read_source);

}  // namespace kiln::compiler
