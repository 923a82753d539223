#include "function_context.h"

#include <algorithm>

#include "kiln/ptx/printer.h"

namespace kiln::check {

const ptx::SourcePosition* user_position(const ptx::SourcePosition& position) {
  if (!is_system_header(position.file)) return &position;
  for (const ptx::SourcePosition& site : position.inlined_at) {
    if (!is_system_header(site.file)) return &site;
  }
  return &position;
}

FunctionContext::FunctionContext(const ptx::Module& module, const ptx::Function& function,
                                 const ptx::SourceMap& source_map,
                                 const ptx::FunctionAnalysis& analysis, CheckReport& report)
    : module_(module),
      function_(function),
      source_map_(source_map),
      analysis_(analysis),
      report_(report) {}

std::string FunctionContext::text(ptx::InstructionId id) const {
  return ptx::print_instruction(function_, function_.instructions[id]);
}

std::string FunctionContext::where(ptx::InstructionId id) const {
  const uint32_t line = function_.instructions[id].location.line;
  if (auto position = source_map_.at_ptx_line(line)) {
    const ptx::SourcePosition* chosen = user_position(*position);
    if (chosen->line != 0) {
      const std::string& file = chosen->file;
      const size_t slash = file.find_last_of('/');
      return (slash == std::string::npos ? file : file.substr(slash + 1)) + ":" +
             std::to_string(chosen->line);
    }
  }
  return "PTX line " + std::to_string(line);
}

bool is_system_header(std::string_view path) {
  static constexpr std::string_view kPrefixes[] = {"/usr/local/cuda", "/usr/include", "/usr/lib",
                                                   "/opt/nvidia"};
  return std::any_of(std::begin(kPrefixes), std::end(kPrefixes),
                     [&](std::string_view prefix) { return path.starts_with(prefix); }) ||
         path.find("/cuda/include/") != std::string_view::npos ||
         path.find("/targets/x86_64-linux/include/") != std::string_view::npos;
}

void FunctionContext::report(FindingKind kind, Severity severity, ptx::InstructionId at,
                             std::string message, std::string fix_hint) {
  if (!reported_.insert({kind, at}).second) return;
  const ptx::Instruction& inst = function_.instructions[at];
  Finding f;
  f.severity = severity;
  f.kind = kind;
  f.function = function_.name;
  f.ptx_line = inst.location.line;
  f.instruction = text(at);
  f.message = std::move(message);
  f.fix_hint = std::move(fix_hint);
  if (auto position = source_map_.at_ptx_line(inst.location.line)) {
    // The innermost position outside toolkit headers: the user's line that called the
    // intrinsic, not the intrinsic's definition.
    const ptx::SourcePosition* chosen = user_position(*position);
    if (chosen->line != 0) {
      f.source_file = chosen->file;
      f.source_line = chosen->line;
      f.source_column = chosen->column;
    }
  }
  report_.findings.push_back(std::move(f));
}

void FunctionContext::note(std::string text) {
  const std::string line = function_.name + ": " + text;
  if (std::find(report_.notes.begin(), report_.notes.end(), line) == report_.notes.end()) {
    report_.notes.push_back(line);
  }
}

}  // namespace kiln::check
