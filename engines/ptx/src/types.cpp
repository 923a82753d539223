#include "kiln/ptx/types.h"

#include <array>
#include <bit>
#include <cstring>
#include <utility>

namespace kiln::ptx {
namespace {

struct TypeInfo {
  std::string_view name;
  Type type;
  uint32_t bits;
};

constexpr std::array<TypeInfo, 40> kTypes = {{
    {"pred", Type::Pred, 1},
    {"b1", Type::B1, 1},
    {"b8", Type::B8, 8},
    {"b16", Type::B16, 16},
    {"b32", Type::B32, 32},
    {"b64", Type::B64, 64},
    {"b128", Type::B128, 128},
    {"u4", Type::U4, 4},
    {"u8", Type::U8, 8},
    {"u16", Type::U16, 16},
    {"u32", Type::U32, 32},
    {"u64", Type::U64, 64},
    {"s4", Type::S4, 4},
    {"s8", Type::S8, 8},
    {"s16", Type::S16, 16},
    {"s32", Type::S32, 32},
    {"s64", Type::S64, 64},
    {"f16", Type::F16, 16},
    {"f16x2", Type::F16x2, 32},
    {"bf16", Type::BF16, 16},
    {"bf16x2", Type::BF16x2, 32},
    {"tf32", Type::TF32, 32},
    {"f32", Type::F32, 32},
    {"f64", Type::F64, 64},
    {"e4m3", Type::E4M3, 8},
    {"e5m2", Type::E5M2, 8},
    {"e4m3x2", Type::E4M3x2, 16},
    {"e5m2x2", Type::E5M2x2, 16},
    {"e2m1", Type::E2M1, 4},
    {"e2m1x2", Type::E2M1x2, 8},
    {"e2m3", Type::E2M3, 8},
    {"e2m3x2", Type::E2M3x2, 16},
    {"e3m2", Type::E3M2, 8},
    {"e3m2x2", Type::E3M2x2, 16},
    {"ue8m0", Type::UE8M0, 8},
    {"ue8m0x2", Type::UE8M0x2, 16},
    {"ue4m3", Type::UE4M3, 8},
    {"texref", Type::TexRef, 0},
    {"samplerref", Type::SamplerRef, 0},
    {"surfref", Type::SurfRef, 0},
}};

struct SpaceInfo {
  std::string_view name;
  StateSpace space;
};

constexpr std::array<SpaceInfo, 12> kSpaces = {{
    {"reg", StateSpace::Reg},
    {"sreg", StateSpace::Sreg},
    {"const", StateSpace::Const},
    {"global", StateSpace::Global},
    {"local", StateSpace::Local},
    {"param", StateSpace::Param},
    {"param::entry", StateSpace::ParamEntry},
    {"param::func", StateSpace::ParamFunc},
    {"shared", StateSpace::Shared},
    {"shared::cta", StateSpace::SharedCta},
    {"shared::cluster", StateSpace::SharedCluster},
    {"tex", StateSpace::Tex},
}};

}  // namespace

std::optional<Type> type_from_name(std::string_view name) {
  for (const TypeInfo& info : kTypes) {
    if (info.name == name) return info.type;
  }
  return std::nullopt;
}

std::string_view type_name(Type type) {
  for (const TypeInfo& info : kTypes) {
    if (info.type == type) return info.name;
  }
  return "";
}

uint32_t type_bits(Type type) {
  for (const TypeInfo& info : kTypes) {
    if (info.type == type) return info.bits;
  }
  return 0;
}

bool is_float_type(Type type) {
  switch (type) {
    case Type::F16:
    case Type::F16x2:
    case Type::BF16:
    case Type::BF16x2:
    case Type::TF32:
    case Type::F32:
    case Type::F64:
    case Type::E4M3:
    case Type::E5M2:
    case Type::E4M3x2:
    case Type::E5M2x2:
    case Type::E2M1:
    case Type::E2M1x2:
    case Type::E2M3:
    case Type::E2M3x2:
    case Type::E3M2:
    case Type::E3M2x2:
    case Type::UE8M0:
    case Type::UE8M0x2:
    case Type::UE4M3:
      return true;
    default:
      return false;
  }
}

bool is_signed_type(Type type) {
  return type == Type::S4 || type == Type::S8 || type == Type::S16 || type == Type::S32 ||
         type == Type::S64;
}

std::optional<StateSpace> state_space_from_name(std::string_view name) {
  for (const SpaceInfo& info : kSpaces) {
    if (info.name == name) return info.space;
  }
  return std::nullopt;
}

std::string_view state_space_name(StateSpace space) {
  for (const SpaceInfo& info : kSpaces) {
    if (info.space == space) return info.name;
  }
  return "";
}

bool is_shared_space(StateSpace space) {
  return space == StateSpace::Shared || space == StateSpace::SharedCta ||
         space == StateSpace::SharedCluster;
}

bool is_param_space(StateSpace space) {
  return space == StateSpace::Param || space == StateSpace::ParamEntry ||
         space == StateSpace::ParamFunc;
}

std::optional<Linkage> linkage_from_name(std::string_view name) {
  if (name == "extern") return Linkage::Extern;
  if (name == "visible") return Linkage::Visible;
  if (name == "weak") return Linkage::Weak;
  if (name == "common") return Linkage::Common;
  return std::nullopt;
}

std::string_view linkage_name(Linkage linkage) {
  switch (linkage) {
    case Linkage::None:
      return "";
    case Linkage::Extern:
      return "extern";
    case Linkage::Visible:
      return "visible";
    case Linkage::Weak:
      return "weak";
    case Linkage::Common:
      return "common";
  }
  return "";
}

double Number::as_double() const {
  switch (format) {
    case NumberFormat::HexF32:
      return static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(bits)));
    case NumberFormat::HexF64:
    case NumberFormat::DecimalFloat:
      return std::bit_cast<double>(bits);
    case NumberFormat::DecimalUnsigned:
      return static_cast<double>(bits);
    default:
      return unsigned_suffix ? static_cast<double>(bits) : static_cast<double>(as_int());
  }
}

}  // namespace kiln::ptx
