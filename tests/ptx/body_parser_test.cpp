// Function bodies: instructions, modifiers, operands of every kind, scopes, labels, .loc.
#include <gtest/gtest.h>

#include "kiln/ptx/printer.h"
#include "ptx_test_support.h"

namespace kiln::ptx {
namespace {

using testing::find;
using testing::kernel;
using testing::parse_error;
using testing::parse_ok;
using testing::reg;

const Instruction& first_instruction(const Module& m) {
  return m.functions.at(0).instructions.at(0);
}

TEST(BodyParser, SplitsADottedOpcodeIntoBaseAndOrderedModifiers) {
  Module m =
      parse_ok(kernel("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
                      "[%r1], [%rd1, {%r2, %r3}], [%r4];"));
  const Instruction& i = first_instruction(m);
  EXPECT_EQ(i.opcode, Opcode::Cp);
  EXPECT_EQ(i.name, "cp");
  EXPECT_EQ(i.modifiers,
            (std::vector<std::string>{"async", "bulk", "tensor", "2d", "shared::cluster", "global",
                                      "mbarrier::complete_tx::bytes"}));
  EXPECT_TRUE(i.types.empty());
  EXPECT_EQ(i.state_spaces(),
            (std::vector<StateSpace>{StateSpace::SharedCluster, StateSpace::Global}));
}

TEST(BodyParser, PicksTheTypeSuffixesOutOfTheModifiers) {
  Module m = parse_ok(kernel(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, "
      "{%r5,%r6}, {%f1,%f2,%f3,%f4};\n"
      "prmt.b32.f4e %r7, %r1, %r2, 7;"));
  const Function& f = m.functions[0];
  EXPECT_EQ(f.instructions[0].types,
            (std::vector<Type>{Type::F32, Type::F16, Type::F16, Type::F32}));
  EXPECT_EQ(f.instructions[0].modifiers.size(), 9u);
  EXPECT_EQ(f.instructions[1].types, (std::vector<Type>{Type::B32}));
  EXPECT_EQ(f.instructions[1].modifiers, (std::vector<std::string>{"b32", "f4e"}));
  EXPECT_EQ(f.instructions[1].full_opcode(), "prmt.b32.f4e");
}

TEST(BodyParser, ResolvesRegistersDeclaredAsRanges) {
  Module m = parse_ok(kernel("add.s32 %r63, %r0, %r12;"));
  const Function& f = m.functions[0];
  const Instruction& i = f.instructions[0];
  ASSERT_EQ(i.operands.size(), 3u);
  for (const Operand& op : i.operands) EXPECT_EQ(op.kind, OperandKind::Register);
  EXPECT_EQ(f.registers[i.operands[0].reg].name, "%r63");
  EXPECT_EQ(f.registers[i.operands[0].reg].type, Type::B32);
  EXPECT_EQ(f.registers.size(), 3u);  // created on first use
}

TEST(BodyParser, RejectsARegisterOutsideItsDeclaredRange) {
  Diagnostic d = parse_error(kernel("add.s32 %r64, %r0, 1;"));
  EXPECT_EQ(d.location.line, 14u);
  EXPECT_EQ(d.location.column, 9u);
  EXPECT_NE(d.message.find("'%r64' is not declared"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find(".reg"), std::string::npos);
}

TEST(BodyParser, RejectsAnUndeclaredNameThatLooksLikeARegister) {
  Diagnostic d = parse_error(kernel("mov.u32 %r1, %bogus;"));
  EXPECT_NE(d.message.find("'%bogus'"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("not a special register"), std::string::npos);
}

TEST(BodyParser, ReadsSpecialRegistersWithComponents) {
  Module m =
      parse_ok(kernel("mov.u32 %r1, %tid.x;\nmov.u32 %r2, %ctaid.y;\nmov.u32 %r3, %laneid;\n"
                      "mov.u32 %r4, %cluster_ctarank;"));
  const Function& f = m.functions[0];
  const Operand& tid = f.instructions[0].operands[1];
  EXPECT_EQ(tid.kind, OperandKind::SpecialRegister);
  EXPECT_EQ(tid.special, SpecialRegister::Tid);
  EXPECT_EQ(tid.component, 'x');
  EXPECT_EQ(f.instructions[1].operands[1].component, 'y');
  EXPECT_EQ(f.instructions[2].operands[1].special, SpecialRegister::Laneid);
  EXPECT_EQ(f.instructions[2].operands[1].component, 0);
  EXPECT_EQ(f.instructions[3].operands[1].special, SpecialRegister::ClusterCtarank);
}

TEST(BodyParser, ReadsGuardsAndTheirNegation) {
  Module m = parse_ok(kernel("$L1:\n@%p1 bra $L1;\n@!%p2 bra.uni $L1;"));
  const Function& f = m.functions[0];
  ASSERT_TRUE(f.instructions[0].guard);
  EXPECT_EQ(f.instructions[0].guard->reg, reg(f, "%p1"));
  EXPECT_FALSE(f.instructions[0].guard->negated);
  ASSERT_TRUE(f.instructions[1].guard);
  EXPECT_TRUE(f.instructions[1].guard->negated);
  EXPECT_EQ(f.instructions[1].operands[0].kind, OperandKind::Label);
  EXPECT_EQ(f.labels[f.instructions[1].operands[0].label].name, "$L1");
}

TEST(BodyParser, ReadsImmediatesOfEveryForm) {
  Module m = parse_ok(
      kernel("mov.b32 %f1, 0f3F800000;\nmov.f64 %rd1, 0d3FF0000000000000;\nmov.u32 %r1, 0xFF;\n"
             "add.s32 %r2, %r1, -1;\nmov.f32 %f2, 1.5;\nmov.u32 %r3, 7U;"));
  const Function& f = m.functions[0];
  auto imm = [&](size_t i) { return f.instructions[i].operands[1]; };
  EXPECT_EQ(imm(0).number.format, NumberFormat::HexF32);
  EXPECT_EQ(imm(1).number.format, NumberFormat::HexF64);
  EXPECT_EQ(imm(2).number.format, NumberFormat::Hex);
  EXPECT_EQ(f.instructions[3].operands[2].number.as_int(), -1);
  EXPECT_DOUBLE_EQ(imm(4).number.as_double(), 1.5);
  EXPECT_TRUE(imm(5).number.unsigned_suffix);
  for (size_t i = 0; i < 6; ++i)
    EXPECT_EQ(f.instructions[i].operands.back().kind, OperandKind::Immediate);
}

TEST(BodyParser, ReadsEveryAddressForm) {
  Module m = parse_ok(kernel(
      ".shared .align 4 .b8 tile[64];\n"
      "ld.global.f32 %f1, [%rd1+16];\nld.shared.f32 %f2, [tile];\nld.shared.f32 %f3, [tile+4];\n"
      "ld.shared.f32 %f4, [%r1+-4];\nld.param.u64 %rd2, [k_out];\nld.global.u32 %r2, [%rd3];"));
  const Function& f = m.functions[0];
  const Operand& a0 = f.instructions[0].operands[1];
  EXPECT_EQ(a0.kind, OperandKind::Address);
  EXPECT_EQ(a0.address_base().kind, OperandKind::Register);
  EXPECT_EQ(a0.offset, 16);
  EXPECT_EQ(f.instructions[1].operands[1].address_base().kind, OperandKind::Symbol);
  EXPECT_EQ(f.instructions[1].operands[1].address_base().name, "tile");
  EXPECT_EQ(f.instructions[2].operands[1].offset, 4);
  EXPECT_EQ(f.instructions[3].operands[1].offset, -4);
  EXPECT_EQ(f.instructions[4].operands[1].address_base().name, "k_out");
  EXPECT_EQ(f.instructions[5].operands[1].offset, 0);
  EXPECT_EQ(print_instruction(f, f.instructions[3]), "ld.shared.f32 \t%f4, [%r1+-4];");
}

TEST(BodyParser, ReadsTensorAddressesWithCoordinateVectors) {
  Module m = parse_ok(kernel(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile [%r1], [%rd1, {%r2, %r3}], [%r4];"));
  const Operand& src = first_instruction(m).operands[1];
  ASSERT_EQ(src.elements.size(), 2u);
  EXPECT_EQ(src.elements[1].kind, OperandKind::Vector);
  EXPECT_EQ(src.elements[1].elements.size(), 2u);
}

TEST(BodyParser, ReadsVectorsSinksPairsAndNegatedPredicates) {
  Module m =
      parse_ok(kernel("ld.global.v4.u32 {%r1, %r2, _, %r4}, [%rd1];\n"
                      "setp.lt.u32 %p1|%p2, %r1, %r2;\n"
                      "setp.lt.and.u32 %p3, %r1, 16, !%p1;\n"
                      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r5], %r6;\n"
                      "mov.b64 {%r7, %r8}, %rd2;"));
  const Function& f = m.functions[0];
  const Operand& v = f.instructions[0].operands[0];
  EXPECT_EQ(v.kind, OperandKind::Vector);
  EXPECT_EQ(v.elements[2].kind, OperandKind::Sink);
  const Operand& pair = f.instructions[1].operands[0];
  EXPECT_EQ(pair.kind, OperandKind::Pair);
  EXPECT_TRUE(f.is_predicate(pair.elements[0]));
  EXPECT_FALSE(f.is_predicate(f.instructions[1].operands[1]));
  EXPECT_EQ(f.registers[pair.elements[1].reg].name, "%p2");
  EXPECT_TRUE(f.instructions[2].operands[3].negated);
  EXPECT_EQ(f.instructions[3].operands[0].kind, OperandKind::Sink);
  EXPECT_EQ(print_instruction(f, f.instructions[1]), "setp.lt.u32 \t%p1|%p2, %r1, %r2;");
}

TEST(BodyParser, ReadsSymbolsWithOffsets) {
  Module m = parse_ok(std::string(testing::kHeader) + ".global .b32 table[4];\n" +
                      kernel("mov.u64 %rd1, table+8;\nret;").substr(testing::kHeader.size()));
  const Operand& s = m.functions.at(0).instructions[0].operands[1];
  EXPECT_EQ(s.kind, OperandKind::Symbol);
  EXPECT_EQ(s.name, "table");
  EXPECT_EQ(s.offset, 8);
}

TEST(BodyParser, ReadsACallSequenceBlock) {
  Module m =
      parse_ok(std::string(testing::kHeader) + ".func (.param .b32 r) callee(.param .b32 a);\n" +
               kernel("{ // callseq 0, 0\n"
                      ".reg .b32 temp_param_reg;\n"
                      ".param .b32 param0;\n"
                      "st.param.b32 [param0+0], %r4;\n"
                      ".param .b32 retval0;\n"
                      "call.uni (retval0), \ncallee, \n(\nparam0\n);\n"
                      "ld.param.b32 %r5, [retval0+0];\n"
                      "} // callseq 0")
                   .substr(testing::kHeader.size()));
  const Function& f = *m.find_function("k");
  ASSERT_EQ(f.scopes.size(), 2u);
  EXPECT_EQ(f.scopes[1].parent, 0u);
  ASSERT_EQ(f.variables.size(), 2u);
  EXPECT_EQ(f.variables[0].space, StateSpace::Param);
  const Instruction& call = f.instructions[find(f, "call")];
  EXPECT_TRUE(is_call(call));
  ASSERT_EQ(call.operands.size(), 3u);
  EXPECT_EQ(call.operands[0].kind, OperandKind::List);
  EXPECT_EQ(call.operands[0].elements[0].name, "retval0");
  EXPECT_EQ(call.operands[1].kind, OperandKind::Symbol);
  EXPECT_EQ(call.operands[1].name, "callee");
  EXPECT_EQ(call.scope, 1u);
  EXPECT_EQ(print_instruction(f, call), "call.uni \t(retval0), callee, (param0);");
}

TEST(BodyParser, ScopesInlineAsmRegistersAndLabels) {
  // nvcc pastes the same asm block twice: the label WAIT and the register P1 exist once per
  // scope, and each branch targets the WAIT of its own block.
  const std::string block =
      "{\n.reg .pred P1;\nWAIT:\nmbarrier.try_wait.parity.shared::cta.b64 P1, [%r1], %r2;\n"
      "@!P1 bra WAIT;\n}\n";
  Module m = parse_ok(kernel(block + block + "ret;"));
  const Function& f = m.functions[0];
  ASSERT_EQ(f.labels.size(), 2u);
  EXPECT_EQ(f.labels[0].scope, 1u);
  EXPECT_EQ(f.labels[1].scope, 2u);
  const Instruction& bra0 = f.instructions[find(f, "bra", 0)];
  const Instruction& bra1 = f.instructions[find(f, "bra", 1)];
  EXPECT_EQ(bra0.operands[0].label, 0u);
  EXPECT_EQ(bra1.operands[0].label, 1u);
  EXPECT_NE(bra0.guard->reg, bra1.guard->reg);  // two different P1 registers
  EXPECT_EQ(f.registers[bra0.guard->reg].scope, 1u);
  EXPECT_EQ(f.registers[bra1.guard->reg].scope, 2u);
}

TEST(BodyParser, LetsAnInnerScopeShadowAnOuterRange) {
  Module m = parse_ok(
      kernel("{\n.reg .pred %p<2>;\nsetp.ne.u32 %p1, %r1, 0;\n}\nsetp.ne.u32 %p1, %r1, 1;"));
  const Function& f = m.functions[0];
  const RegisterId inner = f.instructions[0].operands[0].reg;
  const RegisterId outer = f.instructions[1].operands[0].reg;
  EXPECT_NE(inner, outer);
  EXPECT_EQ(f.registers[inner].scope, 1u);
  EXPECT_EQ(f.registers[outer].scope, 0u);
}

TEST(BodyParser, HidesScopedRegistersOutsideTheirBlock) {
  Diagnostic d =
      parse_error(kernel("{\n.reg .b32 inner;\nmov.u32 inner, 1;\n}\nmov.u32 inner, 2;"));
  EXPECT_EQ(d.location.line, 18u);
  EXPECT_NE(d.message.find("'inner'"), std::string::npos) << d.message;
}

TEST(BodyParser, ReadsBranchTargetTablesAndCallPrototypes) {
  Module m =
      parse_ok(kernel("ts: .branchtargets $L0, $L1;\nbrx.idx %r1, ts;\n$L0:\nret;\n$L1:\n"
                      "prototype_5 : .callprototype (.param .b32 _) _ (.param .b32 _);\nret;"));
  const Function& f = m.functions[0];
  const Label& table = f.labels[testing::label(f, "ts")];
  EXPECT_EQ(table.kind, LabelKind::BranchTargets);
  EXPECT_EQ(f.directives[table.directive].targets, (std::vector<std::string>{"$L0", "$L1"}));
  const Instruction& brx = f.instructions[find(f, "brx")];
  EXPECT_EQ(brx.operands[1].kind, OperandKind::Label);
  const Label& proto = f.labels[testing::label(f, "prototype_5")];
  EXPECT_EQ(proto.kind, LabelKind::CallPrototype);
  EXPECT_EQ(f.directives[proto.directive].text,
            ".callprototype (.param .b32 _) _ (.param .b32 _);");
}

TEST(BodyParser, ReadsLocDirectivesIncludingInlinedAt) {
  Module m = parse_ok(kernel(
      ".loc 1 24 5\nmov.u32 %r1, %tid.x;\n"
      ".loc 2 708 1, function_name $L__info_string0, inlined_at 1 42 7\nadd.s32 %r2, %r1, 1;"));
  const Function& f = m.functions[0];
  ASSERT_EQ(f.locs.size(), 2u);
  EXPECT_EQ(f.locs[0].line, 24u);
  EXPECT_FALSE(f.locs[0].inlined);
  EXPECT_EQ(f.locs[1].function_name, "$L__info_string0");
  EXPECT_TRUE(f.locs[1].inlined);
  EXPECT_EQ(f.locs[1].inlined_line, 42u);
  EXPECT_EQ(f.locs[1].inlined_column, 7u);
  EXPECT_EQ(f.instructions[0].loc, 0u);
  EXPECT_EQ(f.instructions[1].loc, 1u);
}

TEST(BodyParser, KeepsPragmasInOrder) {
  Module m = parse_ok(kernel("$L0:\n.pragma \"nounroll\";\n@%p1 bra $L0;"));
  const Function& f = m.functions[0];
  ASSERT_EQ(f.pragmas.size(), 1u);
  EXPECT_EQ(f.pragmas[0], "\"nounroll\"");
  EXPECT_EQ(f.body[5].kind, StatementKind::Pragma);
}

TEST(BodyParser, KeepsAnUnknownInstructionAsGenericWithAWarning) {
  std::vector<Diagnostic> warnings;
  Module m = parse_ok(kernel("frobnicate.sync.b32 %r1, %r2;\nret;"), &warnings);
  const Instruction& i = first_instruction(m);
  EXPECT_EQ(i.opcode, Opcode::Unknown);
  EXPECT_EQ(i.name, "frobnicate");
  EXPECT_EQ(i.operands.size(), 2u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].severity, Severity::Warning);
  EXPECT_EQ(warnings[0].location.line, 14u);
  EXPECT_NE(warnings[0].message.find("'frobnicate'"), std::string::npos);
}

TEST(BodyParser, KeepsAnUnknownDirectiveAsTextWithAWarning) {
  std::vector<Diagnostic> warnings;
  Module m = parse_ok(kernel(".frob 1, 2;\nret;"), &warnings);
  const Function& f = m.functions[0];
  ASSERT_EQ(f.directives.size(), 1u);
  EXPECT_EQ(f.directives[0].text, ".frob 1, 2;");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].message.find("unknown directive '.frob'"), std::string::npos);
  EXPECT_EQ(f.instructions.size(), 1u);
}

TEST(BodyParser, RejectsABranchToALabelThatDoesNotExist) {
  Diagnostic d = parse_error(kernel("mov.u32 %r1, 0;\n@%p1 bra $L__nowhere;"));
  EXPECT_EQ(d.location.line, 15u);
  EXPECT_NE(d.message.find("'$L__nowhere'"), std::string::npos) << d.message;
}

TEST(BodyParser, RejectsABranchIntoAnotherScopesLabel) {
  Diagnostic d = parse_error(kernel("{\nINNER:\nret;\n}\nbra INNER;"));
  EXPECT_NE(d.message.find("'INNER'"), std::string::npos) << d.message;
}

TEST(BodyParser, RejectsALabelDefinedTwiceInOneScope) {
  Diagnostic d = parse_error(kernel("$L0:\nret;\n$L0:\nret;"));
  EXPECT_EQ(d.location.line, 16u);
  EXPECT_NE(d.message.find("defined twice"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("line 14"), std::string::npos);
}

TEST(BodyParser, RejectsAMissingSemicolonAndSaysWhatWasExpected) {
  Diagnostic d = parse_error(kernel("add.s32 %r1, %r2, 1\nret;"));
  EXPECT_EQ(d.location.line, 15u);
  EXPECT_EQ(d.location.column, 1u);
  EXPECT_NE(d.message.find("expected ',' or ';' after operand 3 of 'add.s32'"), std::string::npos)
      << d.message;
}

TEST(BodyParser, RejectsAnUnclosedBodyAndNamesWhereItOpened) {
  std::string text = kernel("ret;");
  text.pop_back();  // newline
  text.pop_back();  // the closing brace
  Diagnostic d = parse_error(text);
  EXPECT_NE(d.message.find("expected '}' to close the body of 'k' (opened at line 9:1)"),
            std::string::npos)
      << d.message;
}

TEST(BodyParser, RejectsAnUnclosedAddress) {
  Diagnostic d = parse_error(kernel("ld.global.u32 %r1, [%rd1+4;"));
  EXPECT_NE(d.message.find("expected ']' to close the address opened at line 14:20"),
            std::string::npos)
      << d.message;
}

TEST(BodyParser, RejectsAnUnclosedVector) {
  Diagnostic d = parse_error(kernel("mov.b64 {%r1, %r2, %rd1;"));
  EXPECT_NE(d.message.find("expected '}' to close the '{'"), std::string::npos) << d.message;
}

TEST(BodyParser, RejectsNegatingSomethingOtherThanARegister) {
  Diagnostic d = parse_error(kernel("setp.eq.u32 %p1, %r1, !4;"));
  EXPECT_NE(d.message.find("'!' applies only"), std::string::npos) << d.message;
}

}  // namespace
}  // namespace kiln::ptx
