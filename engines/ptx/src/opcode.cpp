#include "kiln/ptx/opcode.h"

#include <algorithm>
#include <array>

namespace kiln::ptx {
namespace {

struct OpcodeInfo {
  std::string_view name;
  Opcode opcode;
};

// Sorted by name (and in enum order), so lookups are binary searches.
constexpr std::array<OpcodeInfo, 135> kOpcodes = {{
    {"abs", Opcode::Abs},
    {"activemask", Opcode::Activemask},
    {"add", Opcode::Add},
    {"addc", Opcode::Addc},
    {"alloca", Opcode::Alloca},
    {"and", Opcode::And},
    {"applypriority", Opcode::Applypriority},
    {"atom", Opcode::Atom},
    {"bar", Opcode::Bar},
    {"barrier", Opcode::Barrier},
    {"bfe", Opcode::Bfe},
    {"bfi", Opcode::Bfi},
    {"bfind", Opcode::Bfind},
    {"bmsk", Opcode::Bmsk},
    {"bra", Opcode::Bra},
    {"brev", Opcode::Brev},
    {"brkpt", Opcode::Brkpt},
    {"brx", Opcode::Brx},
    {"call", Opcode::Call},
    {"clusterlaunchcontrol", Opcode::Clusterlaunchcontrol},
    {"clz", Opcode::Clz},
    {"cnot", Opcode::Cnot},
    {"copysign", Opcode::Copysign},
    {"cos", Opcode::Cos},
    {"cp", Opcode::Cp},
    {"createpolicy", Opcode::Createpolicy},
    {"cvt", Opcode::Cvt},
    {"cvta", Opcode::Cvta},
    {"discard", Opcode::Discard},
    {"div", Opcode::Div},
    {"dp2a", Opcode::Dp2a},
    {"dp4a", Opcode::Dp4a},
    {"elect", Opcode::Elect},
    {"ex2", Opcode::Ex2},
    {"exit", Opcode::Exit},
    {"fence", Opcode::Fence},
    {"fma", Opcode::Fma},
    {"fns", Opcode::Fns},
    {"getctarank", Opcode::Getctarank},
    {"griddepcontrol", Opcode::Griddepcontrol},
    {"isspacep", Opcode::Isspacep},
    {"istypep", Opcode::Istypep},
    {"ld", Opcode::Ld},
    {"ldmatrix", Opcode::Ldmatrix},
    {"ldu", Opcode::Ldu},
    {"lg2", Opcode::Lg2},
    {"lop3", Opcode::Lop3},
    {"mad", Opcode::Mad},
    {"mad24", Opcode::Mad24},
    {"madc", Opcode::Madc},
    {"mapa", Opcode::Mapa},
    {"match", Opcode::Match},
    {"max", Opcode::Max},
    {"mbarrier", Opcode::Mbarrier},
    {"membar", Opcode::Membar},
    {"min", Opcode::Min},
    {"mma", Opcode::Mma},
    {"mov", Opcode::Mov},
    {"movmatrix", Opcode::Movmatrix},
    {"mul", Opcode::Mul},
    {"mul24", Opcode::Mul24},
    {"multimem", Opcode::Multimem},
    {"nanosleep", Opcode::Nanosleep},
    {"neg", Opcode::Neg},
    {"not", Opcode::Not},
    {"or", Opcode::Or},
    {"pmevent", Opcode::Pmevent},
    {"popc", Opcode::Popc},
    {"prefetch", Opcode::Prefetch},
    {"prefetchu", Opcode::Prefetchu},
    {"prmt", Opcode::Prmt},
    {"rcp", Opcode::Rcp},
    {"red", Opcode::Red},
    {"redux", Opcode::Redux},
    {"rem", Opcode::Rem},
    {"ret", Opcode::Ret},
    {"rsqrt", Opcode::Rsqrt},
    {"sad", Opcode::Sad},
    {"selp", Opcode::Selp},
    {"set", Opcode::Set},
    {"setmaxnreg", Opcode::Setmaxnreg},
    {"setp", Opcode::Setp},
    {"shf", Opcode::Shf},
    {"shfl", Opcode::Shfl},
    {"shl", Opcode::Shl},
    {"shr", Opcode::Shr},
    {"sin", Opcode::Sin},
    {"slct", Opcode::Slct},
    {"sqrt", Opcode::Sqrt},
    {"st", Opcode::St},
    {"stackrestore", Opcode::Stackrestore},
    {"stacksave", Opcode::Stacksave},
    {"stmatrix", Opcode::Stmatrix},
    {"sub", Opcode::Sub},
    {"subc", Opcode::Subc},
    {"suld", Opcode::Suld},
    {"suq", Opcode::Suq},
    {"sured", Opcode::Sured},
    {"sust", Opcode::Sust},
    {"szext", Opcode::Szext},
    {"tanh", Opcode::Tanh},
    {"tcgen05", Opcode::Tcgen05},
    {"tensormap", Opcode::Tensormap},
    {"testp", Opcode::Testp},
    {"tex", Opcode::Tex},
    {"tld4", Opcode::Tld4},
    {"trap", Opcode::Trap},
    {"txq", Opcode::Txq},
    {"vabsdiff", Opcode::Vabsdiff},
    {"vabsdiff2", Opcode::Vabsdiff2},
    {"vabsdiff4", Opcode::Vabsdiff4},
    {"vadd", Opcode::Vadd},
    {"vadd2", Opcode::Vadd2},
    {"vadd4", Opcode::Vadd4},
    {"vavrg2", Opcode::Vavrg2},
    {"vavrg4", Opcode::Vavrg4},
    {"vmad", Opcode::Vmad},
    {"vmax", Opcode::Vmax},
    {"vmax2", Opcode::Vmax2},
    {"vmax4", Opcode::Vmax4},
    {"vmin", Opcode::Vmin},
    {"vmin2", Opcode::Vmin2},
    {"vmin4", Opcode::Vmin4},
    {"vote", Opcode::Vote},
    {"vset", Opcode::Vset},
    {"vset2", Opcode::Vset2},
    {"vset4", Opcode::Vset4},
    {"vshl", Opcode::Vshl},
    {"vshr", Opcode::Vshr},
    {"vsub", Opcode::Vsub},
    {"vsub2", Opcode::Vsub2},
    {"vsub4", Opcode::Vsub4},
    {"wgmma", Opcode::Wgmma},
    {"wmma", Opcode::Wmma},
    {"xor", Opcode::Xor},
}};

}  // namespace

Opcode opcode_from_name(std::string_view name) {
  const auto it =
      std::lower_bound(kOpcodes.begin(), kOpcodes.end(), name,
                       [](const OpcodeInfo& info, std::string_view n) { return info.name < n; });
  if (it != kOpcodes.end() && it->name == name) return it->opcode;
  return Opcode::Unknown;
}

std::string_view opcode_name(Opcode opcode) {
  const auto index = static_cast<size_t>(opcode);
  if (index == 0 || index > kOpcodes.size()) return "";
  return kOpcodes[index - 1].name;
}

}  // namespace kiln::ptx
