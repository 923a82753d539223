#include "kiln/ptx/printer.h"

#include <gtest/gtest.h>

#include "ptx_test_support.h"

namespace kiln::ptx {
namespace {

using testing::kernel;
using testing::parse_ok;

TEST(Printer, WritesInstructionsWithGuardsModifiersAndOperands) {
  Module m = parse_ok(
      kernel("$L0:\n@!%p1 bra.uni $L0;\nld.global.nc.v4.f32 {%f1, %f2, _, %f4}, [%rd1+16];\n"
             "mov.b32 %f5, 0f3F800000;\nmov.u32 %r1, %tid.x;"));
  const Function& f = m.functions[0];
  EXPECT_EQ(print_instruction(f, f.instructions[0]), "@!%p1 bra.uni \t$L0;");
  EXPECT_EQ(print_instruction(f, f.instructions[1]),
            "ld.global.nc.v4.f32 \t{%f1, %f2, _, %f4}, [%rd1+16];");
  EXPECT_EQ(print_instruction(f, f.instructions[2]), "mov.b32 \t%f5, 0f3F800000;");
  EXPECT_EQ(print_instruction(f, f.instructions[3]), "mov.u32 \t%r1, %tid.x;");
}

TEST(Printer, WritesNegativeAddressOffsetsTheWayPtxasReadsThem) {
  Module m = parse_ok(kernel("ld.shared.u16 %r1, [%r2-128];"));
  const Function& f = m.functions[0];
  EXPECT_EQ(print_operand(f, f.instructions[0].operands[1]), "[%r2+-128]");
}

TEST(Printer, KeepsTheSpellingOfNumbers) {
  Module m =
      parse_ok(kernel("mov.u32 %r1, 0xFF;\nmov.u32 %r2, 017;\nmov.u32 %r3, -5;\nmov.u32 %r4, 7U;\n"
                      "mov.f64 %rd1, 0d3FF0000000000000;\nmov.f32 %f1, 1.5;\nmov.u32 %r5, 0b101;"));
  const Function& f = m.functions[0];
  const char* expected[] = {"0xFF", "017", "-5", "7U", "0d3FF0000000000000", "1.5", "0b101"};
  for (size_t i = 0; i < 7; ++i) {
    EXPECT_EQ(print_operand(f, f.instructions[i].operands[1]), expected[i]);
  }
}

TEST(Printer, WritesScopesDeclarationsLabelsLocsAndPragmas) {
  Module m = parse_ok(
      kernel(".loc 1 2 3\n{\n.reg .pred P1;\nWAIT:\n@!P1 bra WAIT;\n}\n.pragma \"nounroll\";\n"
             ".shared .align 4 .b8 tile[16];\nret;"));
  const std::string text = print_function(m.functions[0]);
  EXPECT_NE(text.find("\t.reg .pred \t%p<16>;\n"), std::string::npos) << text;
  EXPECT_NE(
      text.find("\t.loc\t1 2 3\n\t{\n\t\t.reg .pred \tP1;\nWAIT:\n\t\t@!P1 bra \tWAIT;\n\t}\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("\t.pragma \"nounroll\";\n"), std::string::npos);
  EXPECT_NE(text.find("\t.shared .align 4 .b8 tile[16];\n"), std::string::npos);
}

TEST(Printer, WritesFunctionHeaders) {
  Module m =
      parse_ok(std::string(testing::kHeader) +
               ".extern .func (.param .b32 r) ext(.param .b64 a);\n"
               ".visible .entry k()\n.maxntid 128, 1, 1\n.pragma \"nounroll\";\n{\nret;\n}\n");
  EXPECT_EQ(print_function(m.functions[0]),
            ".extern .func (.param .b32 r) ext(\n\t.param .b64 a\n)\n;\n");
  EXPECT_EQ(print_function(m.functions[1]),
            ".visible .entry k()\n.maxntid 128, 1, 1\n.pragma \"nounroll\";\n{\n\tret;\n}\n");
}

TEST(Printer, PrintsWhatTheParserReadsBackIdentically) {
  const std::string text = testing::committed("features.sm90a.ptx");
  Module first = parse_ok(text);
  const std::string printed = print_module(first);
  Module second = parse_ok(printed);
  EXPECT_EQ(print_module(second), printed);
  clear_source_locations(first);
  clear_source_locations(second);
  EXPECT_TRUE(first == second);
}

TEST(Printer, WritesTheModuleHeaderFirst) {
  Module m = parse_ok(".version 8.5\n.target sm_80, debug\n.address_size 64\n.global .b32 g;\n");
  EXPECT_EQ(print_module(m),
            ".version 8.5\n.target sm_80, debug\n.address_size 64\n\n.global .b32 g;\n");
}

}  // namespace
}  // namespace kiln::ptx
