// Name resolution inside a function body: registers and labels are visible in the scope that
// declares them and in the scopes nested inside it (inline-asm blocks { .reg .pred p; ... }).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kiln/ptx/function.h"

namespace kiln::ptx::detail {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using NameMap = std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>>;

class NameScopes {
 public:
  explicit NameScopes(Function& function) : function_(function) {}

  // Mirrors Function::scopes: call after appending a scope there.
  void add_scope() { scopes_.emplace_back(); }

  // Registers `decl` (already stored at function.register_decls[decl_index]). Returns an error
  // message for a name declared twice in one scope, else nullopt.
  std::optional<std::string> declare(uint32_t scope, uint32_t decl_index);
  // The register `name` denotes from `scope`, creating its Register on first use; nullopt when
  // no enclosing scope declares it.
  std::optional<RegisterId> find_register(uint32_t scope, std::string_view name);

  // Returns the label previously declared with that name in `scope`, if any.
  std::optional<LabelId> declare_label(uint32_t scope, std::string_view name, LabelId id);
  std::optional<LabelId> find_label(uint32_t scope, std::string_view name) const;

 private:
  struct Range {
    std::string prefix;
    uint32_t count = 0;
    uint32_t decl = 0;
  };
  struct Names {
    NameMap registers;  // resolved names (singles at declaration, range members on use)
    NameMap singles;    // declared single names -> decl index
    std::vector<Range> ranges;
    NameMap labels;
  };

  RegisterId create(uint32_t scope, std::string_view name, uint32_t decl);

  Function& function_;
  std::vector<Names> scopes_;
};

}  // namespace kiln::ptx::detail
