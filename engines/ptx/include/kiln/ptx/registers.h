// Virtual registers and their .reg declarations. A function's registers are numbered densely;
// an inline-asm block { .reg .pred p; ... } declares registers visible only inside it, so the
// same name may denote different registers in different scopes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/ptx/source_location.h"
#include "kiln/ptx/types.h"

namespace kiln::ptx {

struct Register {
  std::string name;  // %r12, P1
  Type type = Type::None;
  uint32_t vector_width = 0;  // .reg .v4 .f32 %v: 4
  uint32_t scope = 0;         // the scope that declares it
  uint32_t decl = 0;          // index into Function::register_decls

  bool operator==(const Register&) const = default;
};

struct RegisterName {
  std::string name;               // "%r" for %r<57>, "P1" for a single name
  std::optional<uint32_t> count;  // %r<57> declares %r0 .. %r56

  bool operator==(const RegisterName&) const = default;
};

// .reg .b32 %r<57>;   .reg .pred p, q;
struct RegisterDecl {
  Type type = Type::None;
  uint32_t vector_width = 0;
  std::vector<RegisterName> names;
  uint32_t scope = 0;
  SourceLocation location;

  bool operator==(const RegisterDecl&) const = default;
};

}  // namespace kiln::ptx
