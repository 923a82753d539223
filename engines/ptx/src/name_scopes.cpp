#include "name_scopes.h"

namespace kiln::ptx::detail {
namespace {

// "%r12" against prefix "%r": 12. Leading zeros do not name a range member (%r01 is not %r1).
std::optional<uint32_t> range_index(std::string_view name, std::string_view prefix) {
  if (name.size() <= prefix.size() || !name.starts_with(prefix)) return std::nullopt;
  std::string_view digits = name.substr(prefix.size());
  if (digits.size() > 1 && digits[0] == '0') return std::nullopt;
  if (digits.size() > 9) return std::nullopt;
  uint32_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<uint32_t>(c - '0');
  }
  return value;
}

}  // namespace

RegisterId NameScopes::create(uint32_t scope, std::string_view name, uint32_t decl) {
  const RegisterDecl& d = function_.register_decls[decl];
  Register reg;
  reg.name = std::string(name);
  reg.type = d.type;
  reg.vector_width = d.vector_width;
  reg.scope = scope;
  reg.decl = decl;
  const auto id = static_cast<RegisterId>(function_.registers.size());
  function_.registers.push_back(std::move(reg));
  scopes_[scope].registers.emplace(std::string(name), id);
  return id;
}

std::optional<std::string> NameScopes::declare(uint32_t scope, uint32_t decl_index) {
  Names& names = scopes_[scope];
  const RegisterDecl& decl = function_.register_decls[decl_index];
  for (const RegisterName& entry : decl.names) {
    if (entry.count) {
      for (const Range& r : names.ranges) {
        if (r.prefix == entry.name) {
          return "register range '" + entry.name + "<N>' is declared twice in this scope";
        }
      }
      names.ranges.push_back({entry.name, *entry.count, decl_index});
    } else {
      if (!names.singles.emplace(entry.name, decl_index).second) {
        return "register '" + entry.name + "' is declared twice in this scope";
      }
    }
  }
  return std::nullopt;
}

std::optional<RegisterId> NameScopes::find_register(uint32_t scope, std::string_view name) {
  for (uint32_t s = scope; s != kNone && s < scopes_.size(); s = function_.scopes[s].parent) {
    Names& names = scopes_[s];
    if (auto it = names.registers.find(name); it != names.registers.end()) return it->second;
    if (auto it = names.singles.find(name); it != names.singles.end()) {
      return create(s, name, it->second);
    }
    for (const Range& r : names.ranges) {
      std::optional<uint32_t> index = range_index(name, r.prefix);
      if (index && *index < r.count) return create(s, name, r.decl);
    }
  }
  return std::nullopt;
}

std::optional<LabelId> NameScopes::declare_label(uint32_t scope, std::string_view name,
                                                 LabelId id) {
  auto [it, inserted] = scopes_[scope].labels.emplace(std::string(name), id);
  if (inserted) return std::nullopt;
  return it->second;
}

std::optional<LabelId> NameScopes::find_label(uint32_t scope, std::string_view name) const {
  for (uint32_t s = scope; s != kNone && s < scopes_.size(); s = function_.scopes[s].parent) {
    const NameMap& labels = scopes_[s].labels;
    if (auto it = labels.find(name); it != labels.end()) return it->second;
  }
  return std::nullopt;
}

}  // namespace kiln::ptx::detail
