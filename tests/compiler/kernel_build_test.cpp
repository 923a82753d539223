// kernel_build.h: compiler commands, the content-hash cache, and (with nvcc installed,
// no GPU needed) real candidate builds through the banned_symbols gate.
#include "kiln/compiler/kernel_build.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "shared_object_fixture.h"

namespace kiln::compiler {
namespace {

Toolchain toolchain() {
  Toolchain t;
  t.cuda_root = KILN_TEST_CUDA_ROOT;
  t.abi_include = testing::source_dir() / "tasks" / "include";
  return t;
}

bool has(const std::vector<std::string>& argv, const std::string& arg) {
  return std::find(argv.begin(), argv.end(), arg) != argv.end();
}

TEST(KernelBuild, GencodeFlagsFollowTheArch) {
  EXPECT_EQ(*KernelBuild::gencode_flags("sm_90a"),
            std::vector<std::string>{"-gencode=arch=compute_90a,code=sm_90a"});
  EXPECT_EQ(*KernelBuild::gencode_flags("sm_80"),
            (std::vector<std::string>{"-gencode=arch=compute_80,code=sm_80",
                                      "-gencode=arch=compute_80,code=compute_80"}));
  EXPECT_FALSE(KernelBuild::gencode_flags("hopper").ok());
  EXPECT_FALSE(KernelBuild::gencode_flags("sm_90a; rm -rf /").ok());
}

TEST(KernelBuild, CandidateCommandLinksOnlyTheSharedRuntime) {
  BuildRequest request;
  request.source = "/job/kernel.cu";
  request.build_dir = "/cache/abc";
  request.libraries = {"cublas"};  // ignored for candidates
  const auto argv = KernelBuild(toolchain()).command(request);
  for (const char* flag : {"-O3", "-lineinfo", "-shared", "-v", "-cudart", "shared"})
    EXPECT_TRUE(has(argv, flag)) << flag;
  EXPECT_TRUE(has(argv, "-gencode=arch=compute_90a,code=sm_90a"));
  EXPECT_FALSE(has(argv, "-lcublas"));
  EXPECT_EQ(argv.back(), "/job/kernel.cu");
  request.kind = BuildKind::kBaseline;
  EXPECT_TRUE(has(KernelBuild(toolchain()).command(request), "-lcublas"));
  request.kind = BuildKind::kReference;
  const auto reference = KernelBuild(toolchain()).command(request);
  EXPECT_EQ(reference.front(), "g++");
  EXPECT_TRUE(has(reference, "-ffp-contract=off"));
}

TEST(KernelBuild, ForTheSimulatedRuntimeKernelsArePtxLinkedToTheShim) {
  Toolchain simulated = toolchain();
  simulated.simulated_runtime = "/opt/kiln/lib/libkiln_cudart_sim.so";
  BuildRequest request;
  request.source = "/job/kernel.cu";
  request.build_dir = "/cache/abc";
  const auto argv = KernelBuild(simulated).command(request);
  for (const char* flag : {"arch=compute_90a,code=compute_90a", "--no-compress", "none",
                           "-L/opt/kiln/lib", "-lkiln_cudart_sim", "-shared"})
    EXPECT_TRUE(has(argv, flag)) << flag;
  EXPECT_FALSE(has(argv, "shared"));  // not -cudart shared: no libcudart at all
  EXPECT_FALSE(has(argv, "-gencode=arch=compute_90a,code=sm_90a"));  // no SASS
  // A simulated build never serves a GPU build from the cache, nor the other way round.
  testing::TempDir dir;
  testing::write_text(dir.path() / "kernel.cu", "int x;");
  request.source = dir.path() / "kernel.cu";
  EXPECT_NE(KernelBuild(simulated).fingerprint(request),
            KernelBuild(toolchain()).fingerprint(request));
}

TEST(KernelBuild, TheSimulatedRuntimeRefusesABaselineThatLinksAVendorLibrary) {
  Toolchain simulated = toolchain();
  simulated.simulated_runtime = "/opt/kiln/lib/libkiln_cudart_sim.so";
  testing::TempDir dir;
  testing::write_text(dir.path() / "baseline.cu", "int x;");
  BuildRequest request;
  request.kind = BuildKind::kBaseline;
  request.source = dir.path() / "baseline.cu";
  request.build_dir = dir.path() / "out";
  request.libraries = {"cublas"};
  const BuildOutcome outcome = KernelBuild(simulated).build(request);
  EXPECT_FALSE(outcome.ok);
  EXPECT_NE(outcome.error.find("baseline that links cublas"), std::string::npos) << outcome.error;
  EXPECT_NE(outcome.error.find("run the job on a GPU worker"), std::string::npos) << outcome.error;
}

TEST(KernelBuild, FingerprintFollowsSourceNotLocation) {
  testing::TempDir dir;
  testing::write_text(dir.path() / "a" / "kernel.cu", "int x;");
  testing::write_text(dir.path() / "b" / "kernel.cu", "int x;");
  testing::write_text(dir.path() / "c" / "kernel.cu", "int y;");
  const KernelBuild builder(toolchain());
  BuildRequest a, b, c;
  a.source = dir.path() / "a" / "kernel.cu";
  a.build_dir = dir.path() / "out1";
  b.source = dir.path() / "b" / "kernel.cu";
  b.build_dir = dir.path() / "out2";
  c.source = dir.path() / "c" / "kernel.cu";
  EXPECT_EQ(builder.fingerprint(a), builder.fingerprint(b));
  EXPECT_NE(builder.fingerprint(a), builder.fingerprint(c));
  b.arch = "sm_80";
  EXPECT_NE(builder.fingerprint(a), builder.fingerprint(b));
}

TEST(KernelBuild, FingerprintFollowsEveryHeaderOfTheAbiFolder) {
  // A kernel may include any header kiln ships beside abi.h (group_layout.h): a change to one
  // must rebuild what was cached against the old text.
  testing::TempDir dir;
  testing::write_text(dir.path() / "kernel.cu", "int x;");
  testing::write_text(dir.path() / "abi" / "kiln" / "abi.h", "// abi");
  testing::write_text(dir.path() / "abi" / "kiln" / "group_layout.h", "// layout 1");
  Toolchain t = toolchain();
  t.abi_include = dir.path() / "abi";
  BuildRequest request;
  request.source = dir.path() / "kernel.cu";
  const std::string before = KernelBuild(t).fingerprint(request);
  testing::write_text(dir.path() / "abi" / "kiln" / "group_layout.h", "// layout 2");
  EXPECT_NE(KernelBuild(t).fingerprint(request), before);
}

TEST(KernelBuild, TrimLogDropsPtxasInfo) {
  const std::string log =
      "ptxas info    : Used 40 registers\n    0 bytes stack frame, 0 bytes spill stores\n"
      "kernel.cu(3): warning: unused\n";
  EXPECT_EQ(KernelBuild::trim_log(log), "kernel.cu(3): warning: unused\n");
  EXPECT_LT(KernelBuild::trim_log(std::string(20000, 'x'), 100).size(), 200u);
}

TEST(KernelBuild, ReferenceCompileErrorsAreReportedAndCached) {
  testing::TempDir dir;
  testing::write_text(dir.path() / "reference.cpp", "this is not C++");
  BuildRequest request;
  request.kind = BuildKind::kReference;
  request.source = dir.path() / "reference.cpp";
  request.build_dir = dir.path() / "build";
  const KernelBuild builder(toolchain());
  const BuildOutcome first = builder.build(request);
  EXPECT_FALSE(first.ok);
  EXPECT_NE(first.error.find("could not compile"), std::string::npos);
  EXPECT_NE(first.log.find("error"), std::string::npos);
  const BuildOutcome second = builder.build(request);
  EXPECT_TRUE(second.cached);
  EXPECT_FALSE(second.ok);
}

TEST(KernelBuild, MissingAbiIncludeIsExplained) {
  Toolchain t = toolchain();
  t.abi_include.clear();
  BuildRequest request;
  request.source = "/x.cu";
  request.build_dir = testing::TempDir().path() / "b";
  const BuildOutcome outcome = KernelBuild(t).build(request);
  EXPECT_FALSE(outcome.ok);
  EXPECT_NE(outcome.error.find("KILN_ABI_INCLUDE"), std::string::npos);
}

#if KILN_TEST_HAVE_NVCC
TEST(KernelBuildNvcc, BuildsTheStarterAndReportsRegisters) {
  testing::TempDir dir;
  BuildRequest request;
  request.source = testing::source_dir() / "tasks" / "fp16_gemm" / "starter.cu";
  request.build_dir = dir.path() / "starter";
  request.banned_prefixes = {"cublas", "cutlass"};
  const BuildOutcome outcome = KernelBuild(toolchain()).build(request);
  ASSERT_TRUE(outcome.ok) << outcome.error << "\n" << outcome.log;
  EXPECT_TRUE(std::filesystem::exists(outcome.library));
  ASSERT_FALSE(outcome.ptxas.kernels.empty());
  EXPECT_GT(outcome.ptxas.max_registers(), 0);
  EXPECT_EQ(outcome.ptxas.kernels[0].arch, "sm_90a");
}

TEST(KernelBuildNvcc, RefusesTheCublasCheatAtLinkTime) {
  testing::TempDir dir;
  BuildRequest request;
  request.source =
      testing::source_dir() / "tests" / "corpus" / "cheats" / "calls_cublas" / "kernel.cu";
  request.build_dir = dir.path() / "cheat";
  request.banned_prefixes = {"cublas", "cublasLt", "cudnn", "cutlass"};
  const BuildOutcome outcome = KernelBuild(toolchain()).build(request);
  EXPECT_FALSE(outcome.ok);
  ASSERT_FALSE(outcome.banned.empty());
  EXPECT_NE(outcome.error.find("cublasGemmEx"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(request.build_dir / "kernel.so"));  // never loaded
}

TEST(KernelBuildNvcc, CompileErrorsPointAtTheSource) {
  testing::TempDir dir;
  testing::write_text(dir.path() / "kernel.cu",
                      "#include \"kiln/abi.h\"\n__global__ void k() { undefined_thing(); }\n");
  BuildRequest request;
  request.source = dir.path() / "kernel.cu";
  request.build_dir = dir.path() / "build";
  const BuildOutcome outcome = KernelBuild(toolchain()).build(request);
  EXPECT_FALSE(outcome.ok);
  EXPECT_NE(outcome.log.find("kernel.cu(2)"), std::string::npos) << outcome.log;
}
#endif

}  // namespace
}  // namespace kiln::compiler
