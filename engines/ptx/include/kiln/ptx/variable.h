// Declarations of state-space variables: module globals, .shared/.local/.param in a body,
// and function parameters and return values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/ptx/source_location.h"
#include "kiln/ptx/types.h"

namespace kiln::ptx {

// An initializer: a scalar, a symbol's address, or a {...} list (nested for arrays).
struct Initializer {
  enum class Kind : uint8_t { Number, Symbol, List };
  Kind kind = Kind::Number;
  Number number;                      // Number
  std::string symbol;                 // Symbol
  bool generic = false;               // Symbol written generic(sym)
  int64_t offset = 0;                 // Symbol: generic(sym)+8
  std::vector<Initializer> elements;  // List

  bool operator==(const Initializer&) const = default;
};

struct Variable {
  Linkage linkage = Linkage::None;
  StateSpace space = StateSpace::None;
  std::vector<std::string> attributes;  // .attribute(.managed) and similar, as written
  uint32_t align = 0;                   // 0: not given
  uint32_t vector_width = 0;            // .v2/.v4/.v8; 0: scalar
  Type type = Type::None;
  bool is_pointer = false;                      // a kernel parameter marked .ptr
  StateSpace pointer_space = StateSpace::None;  // .ptr .global
  uint32_t pointer_align = 0;                   // .ptr .align 16
  std::string name;
  std::vector<std::optional<uint64_t>> dims;  // [4][8]; nullopt for [] (extern arrays)
  std::optional<Initializer> init;
  SourceLocation location;

  bool operator==(const Variable&) const = default;

  // Bytes of storage, when the size is known: type size x vector width x every dimension.
  std::optional<uint64_t> size_bytes() const;
};

}  // namespace kiln::ptx
