// ptxas_report.h: registers, spills and shared memory per kernel from `-Xptxas -v`.
#include "kiln/worker/ptxas_report.h"

#include <gtest/gtest.h>

namespace kiln::worker {
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
  const KernelResources& spilly = report.kernels[1];
  EXPECT_EQ(spilly.registers, 255);
  EXPECT_EQ(spilly.stack_bytes, 96);
  EXPECT_EQ(spilly.spill_stores, 64);
  EXPECT_EQ(report.max_registers(), 255);
  EXPECT_EQ(report.total_spill_bytes(), 96);
  EXPECT_EQ(report.to_json().size(), 2u);
}

TEST(PtxasReport, EmptyAndUnrelatedOutputGiveNothing) {
  EXPECT_TRUE(PtxasReport::parse("").kernels.empty());
  EXPECT_TRUE(
      PtxasReport::parse("kernel.cu(3): error: identifier \"x\" is undefined\n").kernels.empty());
}

}  // namespace
}  // namespace kiln::worker
