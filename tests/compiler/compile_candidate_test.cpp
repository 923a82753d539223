// compile_candidate.h: real nvcc compiles of small kernels (skipped without the toolkit).
#include "kiln/compiler/compile_candidate.h"

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace kiln::compiler {
namespace {

constexpr const char* kScale = R"(#include "kiln/abi.h"

__global__ void __launch_bounds__(128) scale(const float* in, float* out, int n) {
  __shared__ float tile[128];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? in[i] : 0.f;
  __syncthreads();
  if (i < n) out[i] = 2.f * tile[127 - threadIdx.x] + SHIFT;
}

extern "C" int kiln_launch(const kiln_tensor* t, int, const kiln_scalar*, int, cudaStream_t s) {
  int n = static_cast<int>(t[0].shape[0]);
  scale<<<(n + 127) / 128, 128, 0, s>>>(static_cast<const float*>(t[0].data),
                                        static_cast<float*>(t[1].data), n);
  return 0;
}
)";

constexpr const char* kBroken = R"(#include "kiln/abi.h"
__global__ void k(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = undefined_thing + 1.0f;
}
)";

constexpr const char* kBadAsm = R"(__global__ void badasm(int* out) {
  int v;
  asm volatile("mov.u32 %0, %%nosuchreg;" : "=r"(v));
  out[0] = v;
}
)";

class CompileCandidateTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!KILN_TEST_HAVE_NVCC) return;
    auto probed = probe_toolchain();
    if (probed) toolchain_ = new Toolchain(*probed);
  }
  static void TearDownTestSuite() {
    delete toolchain_;
    toolchain_ = nullptr;
  }
  void SetUp() override {
    if (toolchain_ == nullptr) GTEST_SKIP() << "no CUDA toolkit";
  }

  CompileRequest request(const std::string& source) const {
    CompileRequest r;
    r.source = source;
    r.file_name = "candidates/scale/kernel.cu";
    r.arch = "sm_90a";
    r.defines = {"SHIFT=1.0f"};
    r.abi_include = KILN_TEST_ABI_INCLUDE;
    r.toolchain = *toolchain_;
    r.cache_root = cache_.path();
    return r;
  }

  static Toolchain* toolchain_;
  testing::TempDir cache_;
};

Toolchain* CompileCandidateTest::toolchain_ = nullptr;

TEST_F(CompileCandidateTest, CompilesAKernelWithResourcesPtxAndMix) {
  auto result = compile_candidate(request(kScale));
  ASSERT_TRUE(result.ok()) << result.error().message;
  ASSERT_TRUE(result->ok) << result->log;
  EXPECT_FALSE(result->cache_hit);
  EXPECT_EQ(result->errors(), 0);
  ASSERT_EQ(result->kernels.size(), 1u);
  const KernelReport& k = result->kernels[0];
  EXPECT_EQ(k.demangled, "scale(float const*, float*, int)");
  EXPECT_GT(k.registers, 0);
  EXPECT_EQ(k.static_smem_bytes, 512);
  EXPECT_EQ(k.max_threads, 128);
  EXPECT_EQ(k.block_size, 128);
  EXPECT_EQ(k.block_size_source, "launch_bounds");
  EXPECT_GT(k.occupancy.blocks_per_sm, 0);
  ASSERT_TRUE(k.has_instruction_mix);
  EXPECT_GE(k.instruction_mix.count("ld.global.32"), 1);
  EXPECT_EQ(k.instruction_mix.count("bar.sync"), 1);
  EXPECT_NE(result->ptx.find(".entry"), std::string::npos);
  EXPECT_NE(result->ptx.find("\"candidates/scale/kernel.cu\""), std::string::npos);
  EXPECT_EQ(testing::read_text(result->ptx_path), result->ptx);
  EXPECT_TRUE(std::filesystem::exists(result->cache_dir / "result.json"));
  EXPECT_TRUE(std::filesystem::exists(result->cache_dir / "nvcc.log"));
}

TEST_F(CompileCandidateTest, SecondCompileIsACacheHitWithTheSameFacts) {
  auto first = compile_candidate(request(kScale));
  ASSERT_TRUE(first.ok() && first->ok);
  auto second = compile_candidate(request(kScale));
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_TRUE(second->cache_hit);
  EXPECT_EQ(second->key, first->key);
  EXPECT_EQ(second->ptx, first->ptx);
  ASSERT_EQ(second->kernels.size(), 1u);
  EXPECT_EQ(second->kernels[0].registers, first->kernels[0].registers);
  EXPECT_EQ(second->kernels[0].instruction_mix.counts, first->kernels[0].instruction_mix.counts);
  EXPECT_LT(second->seconds, first->seconds);
}

TEST_F(CompileCandidateTest, OccupancyInputsDoNotMissTheCache) {
  ASSERT_TRUE(compile_candidate(request(kScale)).ok());
  CompileRequest r = request(kScale);
  r.block_size = 64;
  r.dynamic_smem_bytes = 4096;
  auto result = compile_candidate(r);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->cache_hit);
  EXPECT_EQ(result->kernels[0].block_size, 64);
  EXPECT_EQ(result->kernels[0].block_size_source, "argument");
  EXPECT_EQ(result->kernels[0].dynamic_smem_bytes, 4096);
}

TEST_F(CompileCandidateTest, ChangedDefineIsANewCompile) {
  auto first = compile_candidate(request(kScale));
  CompileRequest r = request(kScale);
  r.defines = {"SHIFT=2.0f"};
  auto second = compile_candidate(r);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_FALSE(second->cache_hit);
  EXPECT_NE(second->key, first->key);
}

TEST_F(CompileCandidateTest, CompileErrorIsADiagnosticWithLocationAndSourceLine) {
  CompileRequest r = request(kBroken);
  r.file_name = "candidates/broken/kernel.cu";
  auto result = compile_candidate(r);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_FALSE(result->ok);
  ASSERT_GE(result->errors(), 1);
  const Diagnostic& d = result->diagnostics[0];
  EXPECT_EQ(d.file, "candidates/broken/kernel.cu");
  EXPECT_EQ(d.line, 4);
  EXPECT_EQ(d.column, 23);
  EXPECT_EQ(d.source_line, "  if (i < n) out[i] = undefined_thing + 1.0f;");
  EXPECT_NE(d.message.find("undefined_thing"), std::string::npos);
  EXPECT_TRUE(result->ptx.empty());
  // A failed compile is cached too: the same source fails the same way.
  auto again = compile_candidate(r);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->cache_hit);
  EXPECT_EQ(again->diagnostics[0].to_string(), d.to_string());
}

TEST_F(CompileCandidateTest, PtxasErrorPointsAtTheSourceLine) {
  CompileRequest r = request(kBadAsm);
  r.file_name = "badasm.cu";
  auto result = compile_candidate(r);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_FALSE(result->ok);
  ASSERT_GE(result->errors(), 1) << result->log;
  const Diagnostic& d = result->diagnostics[0];
  EXPECT_EQ(d.tool, "ptxas");
  EXPECT_EQ(d.file, "badasm.cu");
  EXPECT_EQ(d.line, 3);
  EXPECT_GT(d.ptx_line, 0);
  EXPECT_NE(d.source_line.find("asm volatile"), std::string::npos);
}

TEST_F(CompileCandidateTest, ChangedHeaderInvalidatesTheCachedCompile) {
  testing::TempDir includes;
  testing::write_text(includes / "tile.cuh", "#define SHIFT_FROM_HEADER 1.0f\n");
  CompileRequest r = request(std::string("#include \"tile.cuh\"\n") + kScale);
  r.defines = {"SHIFT=SHIFT_FROM_HEADER"};
  r.include_dirs = {includes.path()};
  auto first = compile_candidate(r);
  ASSERT_TRUE(first.ok() && first->ok) << (first.ok() ? first->log : first.error().message);
  EXPECT_TRUE(compile_candidate(r)->cache_hit);
  testing::write_text(includes / "tile.cuh", "#define SHIFT_FROM_HEADER 3.0f\n");
  auto after = compile_candidate(r);
  ASSERT_TRUE(after.ok());
  EXPECT_FALSE(after->cache_hit);
  EXPECT_TRUE(compile_candidate(r)->cache_hit);
}

TEST_F(CompileCandidateTest, RefusesFlagsBadArchAndMissingAbiBeforeRunningNvcc) {
  CompileRequest flags = request(kScale);
  flags.flags = {"-G"};
  EXPECT_FALSE(compile_candidate(flags).ok());
  CompileRequest arch = request(kScale);
  arch.arch = "hopper";
  EXPECT_FALSE(compile_candidate(arch).ok());
  CompileRequest abi = request(kScale);
  abi.abi_include = "/nonexistent";
  auto refused = compile_candidate(abi);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("kiln/abi.h"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(cache_.path() / "compile"));
}

}  // namespace
}  // namespace kiln::compiler
