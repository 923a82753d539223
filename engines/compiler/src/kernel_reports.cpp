#include "kiln/compiler/kernel_reports.h"

#include <array>
#include <map>
#include <optional>
#include <regex>
#include <sstream>

#include "kiln/compiler/demangle.h"
#include "kiln/ptx/source_map.h"

namespace kiln::compiler {

namespace {

int product(const ptx::FunctionAttribute* attribute) {
  if (attribute == nullptr || attribute->values.empty()) return 0;
  uint64_t threads = 1;
  for (uint64_t value : attribute->values) threads *= value;
  return static_cast<int>(threads);
}

KernelReport from_ptxas(const KernelResources& resources) {
  KernelReport k;
  k.name = resources.mangled;
  k.demangled = resources.name;
  k.registers = resources.registers;
  k.spill_store_bytes = resources.spill_stores;
  k.spill_load_bytes = resources.spill_loads;
  k.stack_bytes = resources.stack_bytes;
  k.local_bytes = resources.stack_bytes;  // local memory per thread is the stack frame
  k.static_smem_bytes = resources.smem_bytes;
  k.barriers = resources.barriers;
  return k;
}

// The position of the last `.loc F L C` at or above `ptx_line`, its file named by `.file F "x"`.
std::optional<ptx::SourcePosition> loc_in_text(std::string_view ptx, uint32_t ptx_line) {
  static const std::regex kLoc(R"(^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+))");
  static const std::regex kFile(R"re(^\s*\.file\s+(\d+)\s+"([^"]*)")re");
  std::map<std::string, std::string> files;
  std::optional<std::array<std::string, 3>> last;
  std::istringstream lines{std::string(ptx)};
  std::string line;
  for (uint32_t number = 1; std::getline(lines, line); ++number) {
    std::smatch m;
    if (number <= ptx_line && std::regex_search(line, m, kLoc)) last = {m[1], m[2], m[3]};
    if (std::regex_search(line, m, kFile)) files[m[1]] = m[2];
  }
  if (!last || files.count((*last)[0]) == 0) return std::nullopt;
  ptx::SourcePosition position;
  position.file = files[(*last)[0]];
  position.line = static_cast<uint32_t>(std::stoul((*last)[1]));
  position.column = static_cast<uint32_t>(std::stoul((*last)[2]));
  return position;
}

}  // namespace

std::vector<KernelReport> kernel_reports(const PtxasReport& ptxas, const ptx::Module* module) {
  std::vector<KernelReport> out;
  if (module == nullptr) {
    for (const auto& resources : ptxas.kernels) out.push_back(from_ptxas(resources));
    return out;
  }
  for (const ptx::Function& function : module->functions) {
    if (!function.is_kernel() || !function.has_body) continue;
    KernelReport k;
    if (const KernelResources* resources = ptxas.find(function.name)) {
      k = from_ptxas(*resources);
    } else {
      k.name = function.name;
      k.demangled = demangle(function.name);
    }
    const int required = product(function.attribute("reqntid"));
    k.max_threads = required > 0 ? required : product(function.attribute("maxntid"));
    k.required_threads = required > 0;
    if (const ptx::FunctionAttribute* min_blocks = function.attribute("minnctapersm");
        min_blocks != nullptr && !min_blocks->values.empty())
      k.min_blocks_per_sm = static_cast<int>(min_blocks->values.front());
    k.instruction_mix = instruction_mix(function);
    k.has_instruction_mix = true;
    out.push_back(std::move(k));
  }
  return out;
}

void locate_ptx_diagnostics(std::vector<Diagnostic>& diagnostics, const ptx::Module* module,
                            std::string_view ptx, const SourceReader& read_source) {
  bool any = false;
  for (const Diagnostic& d : diagnostics) any = any || d.ptx_line > 0;
  if (!any) return;
  std::optional<ptx::SourceMap> map;
  if (module != nullptr) map = ptx::SourceMap::build(*module);
  for (Diagnostic& d : diagnostics) {
    if (d.ptx_line <= 0) continue;
    auto position = map ? map->at_ptx_line(static_cast<uint32_t>(d.ptx_line))
                        : loc_in_text(ptx, static_cast<uint32_t>(d.ptx_line));
    if (!position || position->line == 0) continue;
    d.message += " (PTX line " + std::to_string(d.ptx_line) + ")";
    d.file = position->file;
    d.line = static_cast<int>(position->line);
    d.column = static_cast<int>(position->column);
    if (read_source) {
      if (auto text = read_source(d.file)) d.source_line = line_of(*text, d.line);
    }
  }
}

}  // namespace kiln::compiler
