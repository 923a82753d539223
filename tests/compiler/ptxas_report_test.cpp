// ptxas_report.h: registers, spills and shared memory per kernel from `-Xptxas -v`.
#include "kiln/compiler/ptxas_report.h"

#include <gtest/gtest.h>

namespace kiln::compiler {
namespace {

constexpr const char* kOutput = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z14gemm_tn_kernelPK6__halfS1_PS_lllll' for 'sm_90a'
ptxas info    : Function properties for _Z14gemm_tn_kernelPK6__halfS1_PS_lllll
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 8448 bytes smem, 440 bytes cmem[0]
ptxas info    : Compiling entry function '_Z6spillyPf' for 'sm_90a'
ptxas info    : Function properties for _Z6spillyPf
    96 bytes stack frame, 64 bytes spill stores, 32 bytes spill loads
ptxas info    : Used 255 registers, used 0 barriers, 360 bytes cmem[0]
)";

TEST(PtxasReport, ParsesEveryKernel) {
  const PtxasReport report = PtxasReport::parse(kOutput);
  ASSERT_EQ(report.kernels.size(), 2u);
  const KernelResources& gemm = report.kernels[0];
  EXPECT_EQ(gemm.name,
            "gemm_tn_kernel(__half const*, __half const*, __half*, long, long, long, long, long)");
  EXPECT_EQ(gemm.arch, "sm_90a");
  EXPECT_EQ(gemm.registers, 40);
  EXPECT_EQ(gemm.smem_bytes, 8448);
  EXPECT_EQ(gemm.mangled, "_Z14gemm_tn_kernelPK6__halfS1_PS_lllll");
  EXPECT_EQ(gemm.barriers, 1);
  const KernelResources& spilly = report.kernels[1];
  EXPECT_EQ(spilly.registers, 255);
  EXPECT_EQ(spilly.stack_bytes, 96);
  EXPECT_EQ(spilly.spill_stores, 64);
  EXPECT_EQ(report.max_registers(), 255);
  EXPECT_EQ(report.total_spill_bytes(), 96);
  EXPECT_EQ(report.to_json().size(), 2u);
}

TEST(PtxasReport, FindsKernelsByMangledName) {
  const PtxasReport report = PtxasReport::parse(kOutput);
  ASSERT_NE(report.find("_Z6spillyPf"), nullptr);
  EXPECT_EQ(report.find("_Z6spillyPf")->name, "spilly(float*)");
  EXPECT_EQ(report.find("spilly(float*)"), nullptr);
}

// nvcc 13.0, -maxrregcount=32 on a kernel with a 128-float array.
TEST(PtxasReport, ReadsRealSpillsUnderARegisterCap) {
  const PtxasReport report = PtxasReport::parse(
      "ptxas info    : Overriding maximum register limit 256 for '_Z5spillPfPKfi' with  32 of "
      "maxrregcount option\n"
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function '_Z5spillPfPKfi' for 'sm_90a'\n"
      "ptxas info    : Function properties for _Z5spillPfPKfi\n"
      "    680 bytes stack frame, 1228 bytes spill stores, 1404 bytes spill loads\n"
      "ptxas info    : Used 32 registers, used 0 barriers, 680 bytes cumulative stack size\n"
      "ptxas info    : Compile time = 31.869 ms\n");
  ASSERT_EQ(report.kernels.size(), 1u);
  EXPECT_EQ(report.kernels[0].registers, 32);
  EXPECT_EQ(report.kernels[0].spill_stores, 1228);
  EXPECT_EQ(report.kernels[0].spill_loads, 1404);
  EXPECT_EQ(report.kernels[0].stack_bytes, 680);
  EXPECT_EQ(report.kernels[0].smem_bytes, 0);
}

TEST(PtxasReport, EmptyAndUnrelatedOutputGiveNothing) {
  EXPECT_TRUE(PtxasReport::parse("").kernels.empty());
  EXPECT_TRUE(
      PtxasReport::parse("kernel.cu(3): error: identifier \"x\" is undefined\n").kernels.empty());
}

}  // namespace
}  // namespace kiln::compiler
