#include "decoder.h"

#include <gtest/gtest.h>

#include "kiln/ptx/parser.h"

namespace kiln::sim {
namespace {

ptx::Module parse(const std::string& body) {
  Result<ptx::ParsedModule> m =
      ptx::parse_ptx(".version 8.5\n.target sm_90a\n.address_size 64\n" + body);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  return m.ok() ? m->module : ptx::Module{};
}

const char* const kKernel = R"(
.func (.param .b32 r) twice(.param .b32 x)
{
  .reg .b32 %a;
  ld.param.b32 %a, [x];
  add.u32 %a, %a, %a;
  st.param.b32 [r], %a;
  ret;
}
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<6>;
  .reg .pred %p<2>;
  mov.u32 %r1, %tid.x;
  add.u32 %r2, %r1, 7;
  add.u32 %r3, %r2, 7;
  setp.lt.u32 %p1, %r1, 4;
  @%p1 bra SKIP;
  vabsdiff.u32.u32.u32 %r4, %r1, %r1, %r1;
SKIP:
  {
  .param .b32 a0;
  st.param.b32 [a0], %r3;
  .param .b32 r0;
  call.uni (r0), twice, (a0);
  ld.param.b32 %r5, [r0];
  }
  ret;
}
)";

class DecoderTest : public ::testing::Test {
 protected:
  DecoderTest() : module_(parse(kKernel)) {
    program_ = decode_kernel(module_, *module_.find_function("k"), globals_);
  }
  // The pc of the first instruction whose full opcode is `text`.
  size_t pc_of(const std::string& text) const {
    for (size_t pc = 0; pc < program_.texts.size(); ++pc) {
      if (program_.texts[pc] == text) return pc;
    }
    ADD_FAILURE() << "no " << text;
    return 0;
  }

  ptx::Module module_;
  SymbolTable globals_;
  Program program_;
};

TEST_F(DecoderTest, UnsupportedFormsDecodeToAHandlerThatFaultsOnlyWhenRun) {
  size_t pc = pc_of("vabsdiff.u32.u32.u32");
  EXPECT_EQ(program_.code[pc].fn, &unsupported_handler);
  EXPECT_GT(program_.ptx_lines[pc], 0u);
  EXPECT_NE(program_.code[pc_of("add.u32")].fn, &unsupported_handler);
}

TEST_F(DecoderTest, ABranchReconvergesAtItsImmediatePostDominator) {
  const Inst& bra = program_.code[pc_of("bra")];
  EXPECT_EQ(bra.target, pc_of("st.param.b32"));
  EXPECT_EQ(bra.reconverge, bra.target);
  EXPECT_NE(bra.guard, kNoGuard);
}

TEST_F(DecoderTest, EqualImmediatesShareOneConstantSlot) {
  size_t first = pc_of("add.u32");
  const Inst& a = program_.code[first];
  const Inst& b = program_.code[first + 1];
  EXPECT_EQ(program_.operands[a.ops + 2], program_.operands[b.ops + 2]);
  size_t constants = 0;
  for (const ConstantSlot& c : program_.constants) {
    if (c.kind == ConstantSlot::Kind::Value && c.value == 7) ++constants;
  }
  EXPECT_EQ(constants, 1u);
}

TEST_F(DecoderTest, TheKernelAndItsCalleesShareOneProgram) {
  ASSERT_EQ(program_.functions.size(), 2u);
  EXPECT_EQ(program_.functions[0].name, "k");
  EXPECT_EQ(program_.functions[1].name, "twice");
  EXPECT_GT(program_.functions[1].entry, program_.functions[0].entry);
  ASSERT_EQ(program_.call_sites.size(), 1u);
  const CallSite& site = program_.call_sites[0];
  EXPECT_EQ(site.entry, program_.functions[1].entry);
  ASSERT_EQ(site.arguments.size(), 1u);
  EXPECT_EQ(site.arguments[0].bytes, 4u);
  EXPECT_EQ(site.arguments[0].to, program_.functions[1].param_offsets[0]);
  // The callee's registers are slots of their own.
  EXPECT_GE(program_.functions[1].slot_begin, program_.functions[0].slot_end);
}

}  // namespace
}  // namespace kiln::sim
