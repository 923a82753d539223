#include "race_scope.h"

namespace kiln::check::race {

Scope scope_of(std::string_view text) {
  // The opcode: the first word after an optional guard ("@%p1 atom.add.cta.u32 ...").
  size_t start = text.find_first_not_of(" \t");
  if (start != std::string_view::npos && text[start] == '@') {
    start = text.find_first_of(" \t", start);
    start = start == std::string_view::npos ? start : text.find_first_not_of(" \t", start);
  }
  if (start == std::string_view::npos) return Scope::Gpu;
  const size_t end = text.find_first_of(" \t;", start);
  const std::string_view opcode = text.substr(start, end - start);
  bool is_volatile = false;
  // Dotted parts: "shared::cta" is a state space, not the scope "cta".
  for (size_t at = 0; at <= opcode.size();) {
    size_t dot = opcode.find('.', at);
    if (dot == std::string_view::npos) dot = opcode.size();
    const std::string_view part = opcode.substr(at, dot - at);
    if (part == "cta") return Scope::Cta;
    if (part == "cluster") return Scope::Cluster;
    if (part == "gpu" || part == "gl") return Scope::Gpu;  // membar.gl
    if (part == "sys") return Scope::Sys;
    if (part == "volatile") is_volatile = true;
    at = dot + 1;
  }
  return is_volatile ? Scope::Sys : Scope::Gpu;
}

}  // namespace kiln::check::race
