#include "kiln/kb/cccl_header.h"

#include <gtest/gtest.h>

#include "kb_fixture.h"
#include "kiln/kb/kb_paths.h"

namespace kiln::kb {
namespace {

using testing::kBulkTensorHeader;
using testing::kMbarrierHeader;

TEST(CcclHeader, ParsesRequirementOnTheSyntaxLineAndTheTemplateOnTheNext) {
  auto forms = parse_cccl_header(kMbarrierHeader, "mbarrier_try_wait_parity.h");
  ASSERT_EQ(forms.size(), 2u);
  const auto& form = forms[0];
  EXPECT_EQ(form.opcode, "mbarrier.try_wait.parity.shared::cta.b64");
  EXPECT_EQ(form.syntax,
            "mbarrier.try_wait.parity.shared::cta.b64 waitComplete, [addr], phaseParity;");
  EXPECT_EQ(form.ptx_isa, "7.8");
  EXPECT_EQ(form.ptx_isa_number, 78);
  EXPECT_EQ(form.sms, std::vector<std::string>{"sm_90"});
  EXPECT_EQ(form.min_sm, "sm_90");
  EXPECT_EQ(form.wrapper, "cuda::ptx::mbarrier_try_wait_parity");
  EXPECT_EQ(form.signature,
            "bool mbarrier_try_wait_parity(uint64_t* addr, const uint32_t& phaseParity)");
  EXPECT_EQ(form.header, "mbarrier_try_wait_parity.h");
}

TEST(CcclHeader, ParsesARequirementWrappedOntoTheNextLineAndModifiers) {
  auto forms = parse_cccl_header(kMbarrierHeader, "mbarrier_try_wait_parity.h");
  ASSERT_EQ(forms.size(), 2u);
  const auto& form = forms[1];
  EXPECT_EQ(form.opcode, "mbarrier.try_wait.parity.sem.scope.shared::cta.b64");
  EXPECT_EQ(form.ptx_isa, "8.0");
  EXPECT_EQ(form.min_sm, "sm_90");
  EXPECT_EQ(form.modifiers, ".sem = { .acquire }; .scope = { .cta, .cluster }");
  EXPECT_EQ(form.signature,
            "template <dot_scope Scope> bool mbarrier_try_wait_parity(sem_acquire_t, "
            "scope_t<Scope> scope, "
            "uint64_t* addr, const uint32_t& phaseParity)");
}

TEST(CcclHeader, ParsesWrappedSyntaxSeveralArchitecturesAndCommentNotes) {
  auto forms = parse_cccl_header(kBulkTensorHeader, "x.h");
  ASSERT_EQ(forms.size(), 3u);
  EXPECT_EQ(forms[0].opcode, "cp.async.bulk.tensor.1d.dst.src.tile.mbarrier::complete_tx::bytes");
  EXPECT_EQ(forms[0].modifiers, ".dst = { .shared::cluster }; .src = { .global }");
  EXPECT_EQ(forms[0].wrapper, "cuda::ptx::cp_async_bulk_tensor");
  EXPECT_EQ(forms[1].opcode, "barrier.cluster.arrive");
  EXPECT_EQ(forms[1].notes, "Marked volatile and as clobbering memory");
  EXPECT_EQ(forms[2].opcode, "tcgen05.mma.cta_group.kind");
  EXPECT_EQ(forms[2].syntax,
            "tcgen05.mma.cta_group.kind [d_tmem], a_desc, b_desc, idesc, enable_input_d;");
  EXPECT_EQ(forms[2].ptx_isa, "8.6");
  EXPECT_EQ(forms[2].sms, (std::vector<std::string>{"sm_100a", "sm_101a"}));
  EXPECT_EQ(forms[2].min_sm, "sm_100a");
}

TEST(CcclHeader, AcceptsFormsWithoutAnSmRequirement) {
  auto forms = parse_cccl_header(
      "/*\n// mov.u32 sreg_value, %%tid.y; // PTX ISA 20\ntemplate <typename = void>\n"
      "__device__ static inline uint32_t get_sreg_tid_y();\n*/\n",
      "get_sreg.h");
  ASSERT_EQ(forms.size(), 1u);
  EXPECT_EQ(forms[0].ptx_isa, "2.0");
  EXPECT_TRUE(forms[0].sms.empty());
  EXPECT_EQ(forms[0].min_sm, "");
  EXPECT_EQ(forms[0].wrapper, "cuda::ptx::get_sreg_tid_y");
}

TEST(CcclHeader, SkipsCommentsThatAreNotWrapperDocumentationAndSurvivesTruncation) {
  EXPECT_TRUE(parse_cccl_header("/* plain comment */ int x; /*\n no slashes */", "a.h").empty());
  EXPECT_TRUE(parse_cccl_header("/*\n// no semicolon here\n*/", "a.h").empty());
  EXPECT_TRUE(parse_cccl_header("/*\n// 123.bad opcode;\n*/", "a.h").empty());
  EXPECT_TRUE(
      parse_cccl_header("/*\n// mbarrier.init.shared.b64 [addr], count; // PTX ISA 70", "a.h")
          .empty());
  EXPECT_TRUE(parse_cccl_header("", "a.h").empty());
  EXPECT_TRUE(parse_cccl_header("*/ /* /*", "a.h").empty());
}

TEST(CcclHeader, ParsesEveryBlockOfTheInstalledToolkit) {
  const auto dir = default_cccl_dir();
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no CCCL PTX headers at " << dir;
  size_t blocks = 0, forms = 0, with_isa = 0, with_wrapper = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::string text = testing::read_text(entry.path());
    for (size_t at = 0; (at = text.find("/*\n//", at)) != std::string::npos; ++at) ++blocks;
    for (const auto& form : parse_cccl_header(text, entry.path().filename().string())) {
      ++forms;
      with_isa += !form.ptx_isa.empty();
      with_wrapper += !form.wrapper.empty() && !form.signature.empty();
      EXPECT_EQ(form.syntax.back(), ';') << form.header << ": " << form.syntax;
      EXPECT_EQ(form.syntax.find("PTX ISA"), std::string::npos)
          << form.header << ": " << form.syntax;
    }
  }
  EXPECT_GT(blocks, 1000u);
  EXPECT_EQ(forms, blocks);
  EXPECT_EQ(with_isa, forms);
  EXPECT_EQ(with_wrapper, forms);
}

}  // namespace
}  // namespace kiln::kb
