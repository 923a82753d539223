// Declarations: module globals, body variables, parameters, initializers, .reg.
#include <gtest/gtest.h>

#include "kiln/ptx/printer.h"
#include "ptx_test_support.h"

namespace kiln::ptx {
namespace {

using testing::kHeader;
using testing::parse_error;
using testing::parse_ok;

std::string with_header(std::string_view text) { return std::string(kHeader) + std::string(text); }

TEST(DeclarationParser, ReadsAnArrayWithAlignmentAndAByteInitializer) {
  Module m = parse_ok(
      with_header(".global .align 4 .b8 g_values[16] = {1, 0, 0, 0, 254, 255, 255, 255};"));
  ASSERT_EQ(m.variables.size(), 1u);
  const Variable& v = m.variables[0];
  EXPECT_EQ(v.space, StateSpace::Global);
  EXPECT_EQ(v.align, 4u);
  EXPECT_EQ(v.type, Type::B8);
  EXPECT_EQ(v.name, "g_values");
  ASSERT_EQ(v.dims.size(), 1u);
  EXPECT_EQ(v.dims[0], 16u);
  ASSERT_TRUE(v.init);
  EXPECT_EQ(v.init->kind, Initializer::Kind::List);
  ASSERT_EQ(v.init->elements.size(), 8u);
  EXPECT_EQ(v.init->elements[4].number.bits, 254u);
  EXPECT_EQ(v.size_bytes(), 16u);
}

TEST(DeclarationParser, ReadsNestedListsAndVectorElements) {
  Module m =
      parse_ok(with_header(".global .align 16 .b32 table[2][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}};\n"
                           ".global .v2 .f32 pairs[2] = {{0f3F800000, 0f40000000}, {1.5, -2.0}};"));
  ASSERT_EQ(m.variables.size(), 2u);
  EXPECT_EQ(m.variables[0].dims.size(), 2u);
  EXPECT_EQ(m.variables[0].init->elements[1].elements[3].number.bits, 8u);
  EXPECT_EQ(m.variables[0].size_bytes(), 32u);
  const Variable& pairs = m.variables[1];
  EXPECT_EQ(pairs.vector_width, 2u);
  const Number& minus_two = pairs.init->elements[1].elements[1].number;
  EXPECT_DOUBLE_EQ(minus_two.as_double(), -2.0);
}

TEST(DeclarationParser, ReadsSymbolAddressesInInitializers) {
  Module m =
      parse_ok(with_header(".global .align 4 .b8 g_values[16];\n"
                           ".global .align 8 .u64 g_ptr = generic(g_values)+8;\n"
                           ".global .align 8 .u64 g_raw = g_values;\n"
                           ".global .align 8 .u64 g_fns[2] = {f, g};"));
  const Initializer& ptr = *m.variables[1].init;
  EXPECT_EQ(ptr.kind, Initializer::Kind::Symbol);
  EXPECT_TRUE(ptr.generic);
  EXPECT_EQ(ptr.symbol, "g_values");
  EXPECT_EQ(ptr.offset, 8);
  EXPECT_FALSE(m.variables[2].init->generic);
  EXPECT_EQ(m.variables[3].init->elements[1].symbol, "g");
  EXPECT_EQ(print_variable(m.variables[1]), ".global .align 8 .u64 g_ptr = generic(g_values)+8");
}

TEST(DeclarationParser, ReadsExternSharedArraysOfUnknownSize) {
  Module m = parse_ok(with_header(".extern .shared .align 16 .b8 smem[];"));
  const Variable& v = m.variables[0];
  EXPECT_EQ(v.linkage, Linkage::Extern);
  EXPECT_EQ(v.space, StateSpace::Shared);
  ASSERT_EQ(v.dims.size(), 1u);
  EXPECT_FALSE(v.dims[0].has_value());
  EXPECT_FALSE(v.size_bytes().has_value());
  EXPECT_EQ(print_variable(v), ".extern .shared .align 16 .b8 smem[]");
}

TEST(DeclarationParser, ReadsLinkageAttributesAndConstants) {
  Module m =
      parse_ok(with_header(".common .global .align 4 .b32 counter;\n"
                           ".visible .global .attribute(.managed) .align 4 .u32 flag;\n"
                           ".const .align 8 .f64 c_pi = 0d400921FB54442D11;\n"
                           ".const .b32 masks[3] = {0xFFFFFFFF, 017, 0b101};"));
  EXPECT_EQ(m.variables[0].linkage, Linkage::Common);
  ASSERT_EQ(m.variables[1].attributes.size(), 1u);
  EXPECT_EQ(m.variables[1].attributes[0], ".attribute(.managed)");
  EXPECT_EQ(m.variables[2].space, StateSpace::Const);
  EXPECT_EQ(m.variables[2].init->number.format, NumberFormat::HexF64);
  EXPECT_EQ(m.variables[3].init->elements[0].number.format, NumberFormat::Hex);
  EXPECT_EQ(m.variables[3].init->elements[1].number.format, NumberFormat::Octal);
}

TEST(DeclarationParser, ReadsPointerParameters) {
  Module m =
      parse_ok(with_header(".entry k(.param .u64 .ptr .global .align 16 k_out, .param .align 8 .b8 "
                           "k_blob[24])\n{\nret;\n}"));
  const Function& f = m.functions[0];
  ASSERT_EQ(f.params.size(), 2u);
  EXPECT_TRUE(f.params[0].is_pointer);
  EXPECT_EQ(f.params[0].pointer_space, StateSpace::Global);
  EXPECT_EQ(f.params[0].pointer_align, 16u);
  EXPECT_EQ(f.params[0].align, 0u);
  EXPECT_EQ(f.params[1].align, 8u);
  EXPECT_EQ(f.params[1].size_bytes(), 24u);
  EXPECT_EQ(print_variable(f.params[0]), ".param .u64 .ptr .global .align 16 k_out");
}

TEST(DeclarationParser, ReadsBodyVariablesAndRegisterDeclarations) {
  Module m =
      parse_ok(testing::kernel("\t.local .align 16 .b8 __local_depot0[272];\n"
                               "\t.shared .align 4 .b8 tile[512];\n"
                               "\t.reg .v4 .b32 %vec;\n"
                               "\t.reg .pred p, q;\n"
                               "\tret;"));
  const Function& f = m.functions[0];
  ASSERT_EQ(f.variables.size(), 2u);
  EXPECT_EQ(f.variables[0].space, StateSpace::Local);
  EXPECT_EQ(f.variables[1].name, "tile");
  ASSERT_EQ(f.register_decls.size(), 6u);
  EXPECT_EQ(f.register_decls[1].type, Type::B32);
  ASSERT_TRUE(f.register_decls[1].names[0].count);
  EXPECT_EQ(*f.register_decls[1].names[0].count, 64u);
  EXPECT_EQ(f.register_decls[4].vector_width, 4u);
  ASSERT_EQ(f.register_decls[5].names.size(), 2u);
  EXPECT_EQ(f.register_decls[5].names[1].name, "q");
  EXPECT_FALSE(f.register_decls[5].names[1].count);
}

TEST(DeclarationParser, RejectsTwoStateSpaces) {
  Diagnostic d = parse_error(with_header(".global .shared .b32 x;"));
  EXPECT_EQ(d.location.line, 5u);
  EXPECT_NE(d.message.find("two state spaces"), std::string::npos) << d.message;
}

TEST(DeclarationParser, RejectsAnAlignmentThatIsNotAPowerOfTwo) {
  Diagnostic d = parse_error(with_header(".global .align 3 .b32 x;"));
  EXPECT_NE(d.message.find("power of two"), std::string::npos) << d.message;
}

TEST(DeclarationParser, RejectsUnknownQualifiersWithWhatWasExpected) {
  Diagnostic d = parse_error(with_header(".global .fancy .b32 x;"));
  EXPECT_EQ(d.location.line, 5u);
  EXPECT_EQ(d.location.column, 9u);
  EXPECT_NE(d.message.find("'.fancy'"), std::string::npos) << d.message;
}

TEST(DeclarationParser, RejectsARegisterDeclarationWithoutAType) {
  Diagnostic d = parse_error(testing::kernel("\t.reg %x;"));
  EXPECT_NE(d.message.find("register type"), std::string::npos) << d.message;
}

TEST(DeclarationParser, RejectsAnUnclosedInitializer) {
  Diagnostic d = parse_error(with_header(".global .b32 x[2] = {1, 2;"));
  EXPECT_NE(d.message.find("expected '}'"), std::string::npos) << d.message;
}

TEST(DeclarationParser, RejectsInitializersNestedTooDeeply) {
  std::string text = ".global .b32 x = " + std::string(40, '{') + "1" + std::string(40, '}') + ";";
  Diagnostic d = parse_error(with_header(text));
  EXPECT_NE(d.message.find("nested"), std::string::npos) << d.message;
}

}  // namespace
}  // namespace kiln::ptx
