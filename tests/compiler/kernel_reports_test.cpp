// kernel_reports.h: ptxas resources joined with the PTX's launch bounds and instruction mix,
// and ptxas's PTX-line errors mapped back to the .cu line.
#include "kiln/compiler/kernel_reports.h"

#include <gtest/gtest.h>

#include "kiln/ptx/parser.h"

namespace kiln::compiler {
namespace {

constexpr const char* kPtx = R"(.version 8.8
.target sm_90a
.address_size 64

.visible .entry _Z1kPf(
	.param .u64 _Z1kPf_param_0
)
.maxntid 128, 1, 1
.minnctapersm 2
{
	.reg .b64 	%rd<3>;
	.reg .f32 	%f<2>;
	.loc	1 3 0
	ld.param.u64 	%rd1, [_Z1kPf_param_0];
	.loc	1 4 5
	ld.global.f32 	%f1, [%rd1];
	.loc	1 5 7
	st.global.f32 	[%rd1+4], %f1;
	ret;
}

.visible .entry _Z5fixedv()
.reqntid 64, 2, 1
{
	ret;
}
	.file	1 "cands/kernel.cu"
)";

constexpr const char* kPtxas = R"(ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90a'
ptxas info    : Function properties for _Z1kPf
    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 2048 bytes smem, 360 bytes cmem[0]
)";

ptx::Module module() {
  auto parsed = ptx::parse_ptx(kPtx);
  EXPECT_TRUE(parsed.ok()) << parsed.error().message;
  return parsed ? parsed->module : ptx::Module{};
}

TEST(KernelReports, JoinsPtxasResourcesWithLaunchBoundsAndMix) {
  const ptx::Module m = module();
  const auto kernels = kernel_reports(PtxasReport::parse(kPtxas), &m);
  ASSERT_EQ(kernels.size(), 2u);
  const KernelReport& k = kernels[0];
  EXPECT_EQ(k.name, "_Z1kPf");
  EXPECT_EQ(k.demangled, "k(float*)");
  EXPECT_EQ(k.registers, 40);
  EXPECT_EQ(k.spill_store_bytes, 8);
  EXPECT_EQ(k.spill_load_bytes, 4);
  EXPECT_EQ(k.stack_bytes, 16);
  EXPECT_EQ(k.static_smem_bytes, 2048);
  EXPECT_EQ(k.barriers, 1);
  EXPECT_EQ(k.max_threads, 128);
  EXPECT_FALSE(k.required_threads);
  EXPECT_EQ(k.min_blocks_per_sm, 2);
  ASSERT_TRUE(k.has_instruction_mix);
  EXPECT_EQ(k.instruction_mix.count("ld.global.32"), 1);
  EXPECT_EQ(kernels[1].max_threads, 128);
  EXPECT_TRUE(kernels[1].required_threads);
  EXPECT_EQ(kernels[1].registers, 0);  // ptxas did not report it
}

TEST(KernelReports, WithoutPtxUsesPtxasAlone) {
  const auto kernels = kernel_reports(PtxasReport::parse(kPtxas), nullptr);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].registers, 40);
  EXPECT_FALSE(kernels[0].has_instruction_mix);
}

std::optional<std::string> reader(const std::string& file) {
  return file == "cands/kernel.cu" ? std::optional<std::string>("a\nb\nc\n  float x = *p;\n")
                                   : std::nullopt;
}

std::vector<Diagnostic> ptxas_error_at(int ptx_line) {
  std::vector<Diagnostic> diagnostics(1);
  diagnostics[0].severity = "error";
  diagnostics[0].tool = "ptxas";
  diagnostics[0].file = "keep/kernel.ptx";
  diagnostics[0].line = ptx_line;
  diagnostics[0].ptx_line = ptx_line;
  diagnostics[0].message = "Unknown symbol";
  return diagnostics;
}

TEST(KernelReports, PtxasLineErrorsWithoutAParsedModuleUseTheLocLines) {
  auto diagnostics = ptxas_error_at(16);
  locate_ptx_diagnostics(diagnostics, nullptr, kPtx, reader);
  EXPECT_EQ(diagnostics[0].file, "cands/kernel.cu");
  EXPECT_EQ(diagnostics[0].line, 4);
  EXPECT_EQ(diagnostics[0].column, 5);
  auto unmapped = ptxas_error_at(2);  // above every .loc
  locate_ptx_diagnostics(unmapped, nullptr, kPtx, reader);
  EXPECT_EQ(unmapped[0].file, "keep/kernel.ptx");
}

TEST(KernelReports, PtxasLineErrorsPointAtTheSourceLine) {
  const ptx::Module m = module();
  auto diagnostics = ptxas_error_at(16);  // the ld.global line
  locate_ptx_diagnostics(diagnostics, &m, kPtx, reader);
  EXPECT_EQ(diagnostics[0].file, "cands/kernel.cu");
  EXPECT_EQ(diagnostics[0].line, 4);
  EXPECT_EQ(diagnostics[0].column, 5);
  EXPECT_EQ(diagnostics[0].source_line, "  float x = *p;");
  EXPECT_NE(diagnostics[0].message.find("PTX line 16"), std::string::npos);
}

}  // namespace
}  // namespace kiln::compiler
