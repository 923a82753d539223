// Fuzz target: the PTX front end (kiln_ptx) on text it did not write: the compile and synccheck
// tools parse whatever PTX nvcc made of a candidate, and the parser is the first thing to meet
// it. The input is PTX text.
//
// Properties: parsing never throws or crashes; a rejection is one error with a line; a module it
// accepts survives every analysis, prints back to PTX that parses again, and printing that
// module gives the same text (the printer is a fixed point after one round).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "kiln/ptx/function_analysis.h"
#include "kiln/ptx/parser.h"
#include "kiln/ptx/printer.h"

using kiln::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  kiln::ptx::ParseOutcome outcome = kiln::ptx::parse_ptx_with_diagnostics(text, {"fuzz.ptx"});
  if (!outcome.module) {
    check(!outcome.diagnostics.empty(), "a rejection has a diagnostic");
    const kiln::ptx::Diagnostic& error = outcome.diagnostics.back();
    check(error.severity == kiln::ptx::Severity::Error, "a rejection ends with an error");
    check(error.location.line > 0 && !error.message.empty(), "the error has a line and a message");
    return 0;
  }
  for (const kiln::ptx::Function& function : outcome.module->functions)
    if (function.has_body) (void)kiln::ptx::analyze_function(function);
  for (const kiln::ptx::Variable& variable : outcome.module->variables) (void)variable.size_bytes();

  const std::string printed = kiln::ptx::print_module(*outcome.module);
  auto again = kiln::ptx::parse_ptx(printed, {"printed.ptx"});
  check(again.ok(), "printed PTX parses again");
  check(kiln::ptx::print_module(again->module) == printed, "printing is a fixed point");
  return 0;
}
