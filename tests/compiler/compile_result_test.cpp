// compile_result.h: the cached form of a compile and its lookups.
#include "kiln/compiler/compile_result.h"

#include <gtest/gtest.h>

namespace kiln::compiler {
namespace {

CompileResult sample() {
  CompileResult r;
  r.ok = true;
  r.key = "abc";
  r.arch = "sm_90a";
  r.file_name = "kernel.cu";
  r.nvcc_seconds = 1.5;
  r.diagnostics.push_back({"warning", "nvcc", "kernel.cu", 4, 7, "177-D", "unused", "int u;", 0});
  KernelReport k;
  k.name = "_Z1kPf";
  k.demangled = "k(float*)";
  k.registers = 40;
  k.max_threads = 128;
  k.instruction_mix.counts["bar.sync"] = 2;
  k.instruction_mix.total = 9;
  k.has_instruction_mix = true;
  r.kernels.push_back(k);
  r.notes.push_back("a note");
  r.log = "log";
  r.command = {"nvcc", "-c"};
  return r;
}

TEST(CompileResult, RoundTripsThroughJson) {
  const CompileResult back = CompileResult::from_json(sample().to_json());
  EXPECT_TRUE(back.ok);
  EXPECT_EQ(back.key, "abc");
  EXPECT_EQ(back.nvcc_seconds, 1.5);
  ASSERT_EQ(back.diagnostics.size(), 1u);
  EXPECT_EQ(back.diagnostics[0].code, "177-D");
  ASSERT_EQ(back.kernels.size(), 1u);
  EXPECT_EQ(back.kernels[0].registers, 40);
  EXPECT_EQ(back.kernels[0].instruction_mix.count("bar.sync"), 2);
  EXPECT_EQ(back.notes, std::vector<std::string>{"a note"});
  EXPECT_EQ(back.command, (std::vector<std::string>{"nvcc", "-c"}));
}

TEST(CompileResult, CountsErrorsAndWarnings) {
  CompileResult r = sample();
  r.diagnostics.push_back({"error", "ptxas", "", 0, 0, "", "too much shared data", "", 0});
  EXPECT_EQ(r.errors(), 1);
  EXPECT_EQ(r.warnings(), 1);
}

TEST(CompileResult, FindsKernelsByEitherName) {
  const CompileResult r = sample();
  EXPECT_NE(r.find_kernel("_Z1kPf"), nullptr);
  EXPECT_NE(r.find_kernel("k(float*)"), nullptr);
  EXPECT_EQ(r.find_kernel("other"), nullptr);
}

TEST(CompileResult, OccupancyAppearsOnlyOnceABlockSizeIsSet) {
  KernelReport k = sample().kernels[0];
  EXPECT_FALSE(k.to_json().contains("occupancy"));
  k.block_size = 128;
  k.block_size_source = "launch_bounds";
  EXPECT_TRUE(k.to_json().contains("occupancy"));
  EXPECT_EQ(k.to_json()["block_size_source"], "launch_bounds");
}

TEST(CompileResult, MissingFieldsReadAsDefaults) {
  const CompileResult r = CompileResult::from_json(nlohmann::json::object());
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.kernels.empty());
}

}  // namespace
}  // namespace kiln::compiler
