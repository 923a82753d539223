#include "kiln/ptx/source_map.h"

#include <algorithm>

namespace kiln::ptx {
namespace {

std::string file_path(const Module& m, uint32_t index) {
  const FileEntry* f = m.find_file(index);
  return f != nullptr ? f->path : "<file " + std::to_string(index) + ">";
}

// A .loc with inlined_at names only the innermost call site; the call site's own inlining is
// the .loc in effect at that site, which nvcc emits just before. Walk back through the
// function's locs for the nearest earlier .loc at the call site position that is itself inlined.
SourcePosition position_of(const Module& m, const Function& f, uint32_t loc_index) {
  const DebugLoc& loc = f.locs[loc_index];
  SourcePosition p;
  p.file = file_path(m, loc.file);
  p.line = loc.line;
  p.column = loc.column;
  if (!loc.function_name.empty()) {
    if (const std::string* name = m.debug_string(loc.function_name)) p.function = *name;
  }
  uint32_t file = loc.inlined_file, line = loc.inlined_line, column = loc.inlined_column;
  bool inlined = loc.inlined;
  uint32_t search_from = loc_index;
  for (int depth = 0; inlined && depth < 64; ++depth) {
    SourcePosition site;
    site.file = file_path(m, file);
    site.line = line;
    site.column = column;
    inlined = false;
    for (uint32_t i = search_from; i-- > 0;) {
      const DebugLoc& prev = f.locs[i];
      if (prev.file == file && prev.line == line && prev.column == column) {
        if (!prev.function_name.empty()) {
          if (const std::string* name = m.debug_string(prev.function_name)) site.function = *name;
        }
        if (prev.inlined) {
          inlined = true;
          file = prev.inlined_file;
          line = prev.inlined_line;
          column = prev.inlined_column;
          search_from = i;
        }
        break;
      }
    }
    p.inlined_at.push_back(std::move(site));
  }
  return p;
}

bool path_matches(std::string_view path, std::string_view file) {
  if (path == file) return true;
  if (path.size() <= file.size() || !path.ends_with(file)) return false;
  const char before = path[path.size() - file.size() - 1];
  return before == '/' || before == '\\';
}

}  // namespace

SourceMap SourceMap::build(const Module& module) {
  SourceMap map;
  for (uint32_t fi = 0; fi < module.functions.size(); ++fi) {
    const Function& f = module.functions[fi];
    if (!f.has_body) continue;
    uint32_t first = UINT32_MAX, last = 0;
    for (InstructionId i = 0; i < f.instructions.size(); ++i) {
      const Instruction& inst = f.instructions[i];
      first = std::min(first, inst.location.line);
      last = std::max(last, inst.location.line);
      if (inst.loc == kNone || inst.loc >= f.locs.size()) continue;
      map.entries_.push_back({inst.location.line, fi, i, position_of(module, f, inst.loc)});
    }
    if (first <= last) map.function_ranges_.emplace_back(first, last);
  }
  std::stable_sort(
      map.entries_.begin(), map.entries_.end(),
      [](const SourceMapEntry& a, const SourceMapEntry& b) { return a.ptx_line < b.ptx_line; });
  return map;
}

std::optional<SourcePosition> SourceMap::at_ptx_line(uint32_t ptx_line) const {
  auto it =
      std::upper_bound(entries_.begin(), entries_.end(), ptx_line,
                       [](uint32_t line, const SourceMapEntry& e) { return line < e.ptx_line; });
  if (it == entries_.begin()) return std::nullopt;
  const SourceMapEntry& e = *std::prev(it);
  // Only within the same function's span of lines.
  for (const auto& [first, last] : function_ranges_) {
    if (e.ptx_line >= first && e.ptx_line <= last) {
      if (ptx_line > last) return std::nullopt;
      return e.position;
    }
  }
  return e.position;
}

std::vector<uint32_t> SourceMap::ptx_lines_for(std::string_view file, uint32_t line) const {
  std::vector<uint32_t> lines;
  for (const SourceMapEntry& e : entries_) {
    bool match = e.position.line == line && path_matches(e.position.file, file);
    for (const SourcePosition& site : e.position.inlined_at) {
      match = match || (site.line == line && path_matches(site.file, file));
    }
    if (match && (lines.empty() || lines.back() != e.ptx_line)) lines.push_back(e.ptx_line);
  }
  return lines;
}

std::string to_string(const SourcePosition& p) {
  std::string out = p.file + ":" + std::to_string(p.line) + ":" + std::to_string(p.column);
  for (const SourcePosition& site : p.inlined_at) {
    out += " (inlined into " + site.file + ":" + std::to_string(site.line) + ":" +
           std::to_string(site.column) + ")";
  }
  return out;
}

}  // namespace kiln::ptx
