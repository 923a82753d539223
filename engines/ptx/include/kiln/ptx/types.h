// PTX data types, state spaces and linkage, with their spellings.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln::ptx {

// Fundamental and packed types as they appear in suffixes (.f32) and declarations (.reg .f32).
enum class Type : uint8_t {
  None,  // no type given (opaque declarations)
  Pred,
  B1,
  B8,
  B16,
  B32,
  B64,
  B128,
  U4,
  U8,
  U16,
  U32,
  U64,
  S4,
  S8,
  S16,
  S32,
  S64,
  F16,
  F16x2,
  BF16,
  BF16x2,
  TF32,
  F32,
  F64,
  E4M3,
  E5M2,
  E4M3x2,
  E5M2x2,
  E2M1,
  E2M1x2,
  E2M3,
  E2M3x2,
  E3M2,
  E3M2x2,
  UE8M0,
  UE8M0x2,
  UE4M3,
  TexRef,
  SamplerRef,
  SurfRef,
};

std::optional<Type> type_from_name(std::string_view name);  // "f32" (no dot)
std::string_view type_name(Type type);                      // "f32"
uint32_t type_bits(Type type);                              // 0 for None and opaque refs
bool is_float_type(Type type);
bool is_signed_type(Type type);

// Where a variable lives, or which space a memory instruction addresses.
enum class StateSpace : uint8_t {
  None,
  Reg,
  Sreg,
  Const,
  Global,
  Local,
  Param,
  ParamEntry,     // .param::entry
  ParamFunc,      // .param::func
  Shared,         // .shared (defaults to ::cta)
  SharedCta,      // .shared::cta
  SharedCluster,  // .shared::cluster
  Tex,
  Generic,  // a memory instruction without a space modifier
};

std::optional<StateSpace> state_space_from_name(std::string_view name);  // "shared::cta"
std::string_view state_space_name(StateSpace space);                     // "" for None/Generic
bool is_shared_space(StateSpace space);
bool is_param_space(StateSpace space);

enum class Linkage : uint8_t { None, Extern, Visible, Weak, Common };

std::optional<Linkage> linkage_from_name(std::string_view name);  // "visible"
std::string_view linkage_name(Linkage linkage);

// A numeric literal, kept with its spelling so printing reproduces it.
enum class NumberFormat : uint8_t {
  Decimal,          // signed 64-bit
  DecimalUnsigned,  // a decimal literal above INT64_MAX
  Hex,              // 0x...
  Octal,            // 0...
  Binary,           // 0b...
  HexF32,           // 0f + 8 hex digits (IEEE single bits)
  HexF64,           // 0d + 16 hex digits (IEEE double bits)
  DecimalFloat,     // 1.5, 2e-3 (a double)
};

struct Number {
  uint64_t bits = 0;  // integer: two's complement; float: IEEE bits (HexF32 uses the low 32)
  NumberFormat format = NumberFormat::Decimal;
  bool unsigned_suffix = false;  // 42U

  bool is_float() const {
    return format == NumberFormat::HexF32 || format == NumberFormat::HexF64 ||
           format == NumberFormat::DecimalFloat;
  }
  int64_t as_int() const { return static_cast<int64_t>(bits); }
  double as_double() const;  // the value of a float literal, or the integer converted
  bool operator==(const Number&) const = default;
};

}  // namespace kiln::ptx
