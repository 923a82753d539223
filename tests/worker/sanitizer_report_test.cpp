// sanitizer_report.h: compute-sanitizer's report in its several spellings.
#include "kiln/worker/sanitizer_report.h"

#include <gtest/gtest.h>

namespace kiln::worker {
namespace {

constexpr const char* kMemcheck = R"(========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 2 bytes
=========     at scribble_past_end(__half *, long, long)+0x1d0 in /src/cheats/out_of_bounds_write/kernel.cu:10
=========     by thread (5,0,0) in block (0,0,0)
=========     Address 0x7f2a1c003c9c is out of bounds
=========     and is 2 bytes after the nearest allocation at 0x7f2a1c000000 of size 15516 bytes
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: [0x2d4f5a] in libcuda.so.1
=========
========= Invalid __global__ write of size 2 bytes
=========     at scribble_past_end(__half *, long, long)+0x1d0 in /src/cheats/out_of_bounds_write/kernel.cu:10
=========     by thread (6,0,0) in block (0,0,0)
=========     Address 0x7f2a1c003c9e is out of bounds
=========
========= Program hit cudaErrorLaunchFailure (error 719) due to "unspecified launch failure" on CUDA API call to cudaDeviceSynchronize.
=========
========= ERROR SUMMARY: 3 errors
)";

TEST(SanitizerReport, ParsesAndMergesMemcheckFindings) {
  const SanitizerReport report = SanitizerReport::parse(kMemcheck, "memcheck");
  EXPECT_EQ(report.error_summary, 3);
  ASSERT_EQ(report.findings.size(), 2u);
  const SanitizerFinding& write = report.findings[0];
  EXPECT_EQ(write.kind, "Invalid __global__ write of size 2 bytes");
  EXPECT_EQ(write.kernel, "scribble_past_end(__half *, long, long)");
  EXPECT_EQ(write.pc, "0x1d0");
  EXPECT_EQ(write.file, "/src/cheats/out_of_bounds_write/kernel.cu");
  EXPECT_EQ(write.line, 10);
  EXPECT_EQ(write.thread, "(5,0,0)");
  EXPECT_EQ(write.block, "(0,0,0)");
  EXPECT_EQ(write.address, "0x7f2a1c003c9c");
  EXPECT_EQ(write.count, 2);
  EXPECT_NE(write.detail.find("2 bytes after the nearest allocation"), std::string::npos);
  EXPECT_EQ(write.detail.find("Host Frame"), std::string::npos);
  EXPECT_NE(report.findings[1].kind.find("Program hit cudaErrorLaunchFailure"), std::string::npos);
  const nlohmann::json j = report.to_json();
  EXPECT_EQ(j["distinct_findings"], 2);
  EXPECT_EQ(j["findings"][0]["line"], 10);
}

TEST(SanitizerReport, ReadsTheOlderLocationSpellings) {
  const std::string text =
      "========= Invalid __global__ read of size 4 bytes\n"
      "=========     at 0x3c8 in /home/u/exercise.cu:42:affine_decrypt(int*,int*)\n"
      "=========     by thread (0,0,0) in block (0,0,0)\n"
      "=========\n"
      "========= Invalid __global__ write of size 4 bytes\n"
      "=========     at 0x150 in kernel(int*, int)\n"
      "=========\n"
      "========= Invalid __global__ write of size 4 bytes\n"
      "=========     at unaligned_kernel():0x160 in memcheck_demo.cu:6\n"
      "=========\n";
  const SanitizerReport report = SanitizerReport::parse(text, "memcheck");
  ASSERT_EQ(report.findings.size(), 3u);
  EXPECT_EQ(report.findings[0].kernel, "affine_decrypt(int*,int*)");
  EXPECT_EQ(report.findings[0].line, 42);
  EXPECT_EQ(report.findings[0].pc, "0x3c8");
  EXPECT_EQ(report.findings[1].kernel, "kernel(int*, int)");
  EXPECT_EQ(report.findings[1].file, "");
  EXPECT_EQ(report.findings[2].kernel, "unaligned_kernel()");
  EXPECT_EQ(report.findings[2].pc, "0x160");
  EXPECT_EQ(report.findings[2].file, "memcheck_demo.cu");
}

TEST(SanitizerReport, ParsesRacecheckAnalysis) {
  const std::string text =
      "========= COMPUTE-SANITIZER\n"
      "========= Error: Race reported between Write access at reduce(float*)+0x1d0 in "
      "/src/race.cu:7\n"
      "=========     and Read access at reduce(float*)+0x200 in /src/race.cu:9 [248 hazards]\n"
      "=========\n"
      "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n";
  const SanitizerReport report = SanitizerReport::parse(text, "racecheck");
  ASSERT_EQ(report.findings.size(), 1u);
  const SanitizerFinding& race = report.findings[0];
  EXPECT_EQ(race.severity, "error");
  EXPECT_EQ(race.kind, "Race reported between Write access");
  EXPECT_EQ(race.kernel, "reduce(float*)");
  EXPECT_EQ(race.line, 7);
  EXPECT_EQ(race.hazards, 248);
  EXPECT_NE(race.detail.find("/src/race.cu:9"), std::string::npos);
}

TEST(SanitizerReport, ParsesInitcheckAndWarnings) {
  const std::string text =
      "========= Uninitialized __global__ memory read of size 4 bytes\n"
      "=========     at split_k_partial(const __half *, const __half *, float *, long, long, "
      "long)+0x2b0 in "
      "k.cu:22\n"
      "=========     by thread (64,0,0) in block (3,1,0)\n"
      "=========\n"
      "========= Warning: Race reported between Read access at k(int*)+0x10 in k.cu:3\n"
      "=========     and Write access at k(int*)+0x20 in k.cu:4 [2 hazards]\n"
      "=========\n"
      "========= ERROR SUMMARY: 1 error\n";
  const SanitizerReport report = SanitizerReport::parse(text, "initcheck");
  ASSERT_EQ(report.findings.size(), 2u);
  EXPECT_EQ(report.findings[0].kind, "Uninitialized __global__ memory read of size 4 bytes");
  EXPECT_EQ(report.findings[0].block, "(3,1,0)");
  EXPECT_EQ(report.findings[1].severity, "warning");
  EXPECT_EQ(report.error_summary, 1);
}

TEST(SanitizerReport, ToolFailuresAreReportedNotFindings) {
  const SanitizerReport report = SanitizerReport::parse(
      "========= COMPUTE-SANITIZER\n========= Error: Device not supported\n", "memcheck");
  EXPECT_TRUE(report.tool_failed);
  EXPECT_TRUE(report.findings.empty());
  const SanitizerReport clean = SanitizerReport::parse(
      "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n", "synccheck");
  EXPECT_FALSE(clean.tool_failed);
  EXPECT_TRUE(clean.findings.empty());
  EXPECT_EQ(clean.error_summary, 0);
}

}  // namespace
}  // namespace kiln::worker
