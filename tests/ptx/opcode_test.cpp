#include "kiln/ptx/opcode.h"

#include <gtest/gtest.h>

namespace kiln::ptx {
namespace {

TEST(Opcode, MapsEveryNameToItsOpcodeAndBack) {
  for (auto i = static_cast<uint16_t>(Opcode::Abs); i <= static_cast<uint16_t>(Opcode::Xor); ++i) {
    const auto op = static_cast<Opcode>(i);
    const std::string_view name = opcode_name(op);
    ASSERT_FALSE(name.empty()) << i;
    EXPECT_EQ(opcode_from_name(name), op) << name;
  }
}

TEST(Opcode, LeavesUnknownNamesUnknown) {
  EXPECT_EQ(opcode_from_name("frobnicate"), Opcode::Unknown);
  EXPECT_EQ(opcode_from_name(""), Opcode::Unknown);
  EXPECT_EQ(opcode_name(Opcode::Unknown), "");
  EXPECT_EQ(opcode_from_name("wgmma"), Opcode::Wgmma);
  EXPECT_EQ(opcode_from_name("tcgen05"), Opcode::Tcgen05);
}

}  // namespace
}  // namespace kiln::ptx
