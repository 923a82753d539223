// banned_symbols.h: the link-time gate, on symbol tables made by hand and built with g++.
#include "kiln/compiler/banned_symbols.h"

#include <gtest/gtest.h>

#include "shared_object_fixture.h"

namespace kiln::compiler {
namespace {

const std::vector<std::string> kGemmBans = {"cublas", "cublasLt", "cudnn", "cutlass"};

ElfSymbols table(std::vector<ElfSymbol> symbols, std::vector<std::string> needed = {}) {
  return ElfSymbols{std::move(symbols), std::move(needed)};
}

TEST(BannedSymbols, RefusesReferencesToBannedCFunctions) {
  const auto hits = BannedSymbols(kGemmBans).scan(
      table({{"cublasGemmEx", false, true}, {"cudaMalloc", false, true}}));
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].symbol, "cublasGemmEx");
  EXPECT_EQ(hits[0].rule, "cublas");
  EXPECT_EQ(hits[0].where, "references");
  EXPECT_NE(BannedSymbols::describe(hits).find("cublasGemmEx"), std::string::npos);
}

TEST(BannedSymbols, ComparesCxxNamesAfterDemangling) {
  // void cutlass::Kernel<int>(int) and a function taking a cudnnContext*.
  const auto hits = BannedSymbols(kGemmBans).scan(table({{"_ZN7cutlass6KernelIiEEvi", true, true},
                                                         {"_Z3runP12cudnnContext", true, false},
                                                         {"_Z9my_kernelPf", true, true}}));
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0].demangled, "void cutlass::Kernel<int>(int)");
  EXPECT_EQ(hits[0].where, "defines");
  EXPECT_EQ(hits[1].rule, "cudnn");
}

TEST(BannedSymbols, MatchesWholeIdentifiersOnly) {
  EXPECT_TRUE(BannedSymbols::matches_prefix("x", "kiln::cublas_wrapper::run()", "cublas"));
  EXPECT_FALSE(BannedSymbols::matches_prefix("my_cublas_like", "my_cublas_like", "cublas"));
  EXPECT_FALSE(BannedSymbols::matches_prefix("notcutlass", "notcutlass", "cutlass"));
  EXPECT_TRUE(BannedSymbols::matches_prefix("cutlass_gemm", "cutlass_gemm", "cutlass"));
}

TEST(BannedSymbols, RefusesBannedLibraries) {
  const auto hits =
      BannedSymbols(kGemmBans).scan(table({}, {"libcudart.so.13", "libcublasLt.so.13"}));
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].where, "needs library");
  EXPECT_EQ(hits[0].symbol, "libcublasLt.so.13");
}

TEST(BannedSymbols, RefusesRunTimeLoadingAndProgramsForEveryCandidate) {
  const auto hits = BannedSymbols({}).scan(table({{"dlopen", false, true},
                                                  {"dlsym", false, true},
                                                  {"system", false, true},
                                                  {"pthread_create", false, true}}));
  ASSERT_EQ(hits.size(), 3u);
  EXPECT_NE(hits[0].reason.find("run time"), std::string::npos);
  // Without the worker's rules (the baseline) nothing is refused.
  EXPECT_TRUE(BannedSymbols({}, false).scan(table({{"dlopen", false, true}})).empty());
}

TEST(BannedSymbols, CatchesARealObjectCallingCublas) {
  testing::TempDir dir;
  const auto so = testing::build_shared_object(dir.path(), "cheat", R"(
    extern "C" int cublasCreate_v2(void**);
    extern "C" int kiln_launch() { void* h = nullptr; return cublasCreate_v2(&h); }
  )");
  ASSERT_FALSE(so.empty());
  auto symbols = ElfReader::read(so);
  ASSERT_TRUE(symbols.ok());
  const auto hits = BannedSymbols(kGemmBans).scan(*symbols);
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].symbol, "cublasCreate_v2");
}

TEST(BannedSymbols, PassesACleanObject) {
  testing::TempDir dir;
  const auto so = testing::build_shared_object(dir.path(), "clean", R"(
    #include <vector>
    extern "C" int kiln_launch() { std::vector<int> v(3); return static_cast<int>(v.size()); }
  )");
  ASSERT_FALSE(so.empty());
  auto symbols = ElfReader::read(so);
  ASSERT_TRUE(symbols.ok());
  EXPECT_TRUE(BannedSymbols(kGemmBans).scan(*symbols).empty());
}

}  // namespace
}  // namespace kiln::compiler
