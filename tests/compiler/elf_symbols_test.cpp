// elf_symbols.h: symbols and needed libraries of real shared objects built here, and
// malformed files refused with a reason.
#include "kiln/compiler/elf_symbols.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "shared_object_fixture.h"

namespace kiln::compiler {
namespace {

const ElfSymbol* find(const ElfSymbols& symbols, const std::string& name) {
  for (const auto& s : symbols.symbols) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

TEST(ElfReader, ReadsDefinedAndUndefinedSymbolsOfASharedObject) {
  testing::TempDir dir;
  const auto so = testing::build_shared_object(dir.path(), "lib", R"(
    extern "C" int cublasGemmEx(int);          // referenced, resolved at load time
    extern "C" int kiln_launch() { return cublasGemmEx(3); }
    namespace cutlass { int gemm(int x) { return x + 1; } }
  )");
  ASSERT_FALSE(so.empty());
  auto symbols = ElfReader::read(so);
  ASSERT_TRUE(symbols.ok()) << symbols.error().message;
  const ElfSymbol* launch = find(*symbols, "kiln_launch");
  ASSERT_NE(launch, nullptr);
  EXPECT_TRUE(launch->defined);
  const ElfSymbol* gemm = find(*symbols, "cublasGemmEx");
  ASSERT_NE(gemm, nullptr);
  EXPECT_FALSE(gemm->defined);
  EXPECT_NE(find(*symbols, "_ZN7cutlass4gemmEi"), nullptr);
}

TEST(ElfReader, ListsNeededLibraries) {
  testing::TempDir dir;
  const auto so = testing::build_shared_object(dir.path(), "lib",
                                               "extern \"C\" int f() { return 1; }", {"-lm"});
  ASSERT_FALSE(so.empty());
  // -lm is dropped when unused under --as-needed; force a dependency with a C++ one.
  const auto cxx = testing::build_shared_object(
      dir.path(), "libcxx", "#include <string>\nstd::string g() { return std::string(40, 'x'); }");
  auto symbols = ElfReader::read(cxx);
  ASSERT_TRUE(symbols.ok());
  EXPECT_NE(std::find_if(symbols->needed.begin(), symbols->needed.end(),
                         [](const std::string& n) { return n.rfind("libstdc++", 0) == 0; }),
            symbols->needed.end());
}

TEST(ElfReader, RefusesWhatIsNotAnElfSharedObject) {
  EXPECT_FALSE(ElfReader::parse("").ok());
  EXPECT_FALSE(ElfReader::parse(std::string(64, 'x')).ok());
  std::string header(64, '\0');
  header[0] = 0x7f;
  header[1] = 'E';
  header[2] = 'L';
  header[3] = 'F';
  header[4] = 1;  // ELFCLASS32
  auto r = ElfReader::parse(header);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("64-bit"), std::string::npos);
  EXPECT_FALSE(ElfReader::read("/nonexistent/kernel.so").ok());
}

TEST(ElfReader, RefusesTruncatedFiles) {
  testing::TempDir dir;
  const auto so =
      testing::build_shared_object(dir.path(), "lib", "extern \"C\" int f() { return 1; }");
  ASSERT_FALSE(so.empty());
  const std::string bytes = testing::read_text(so);
  for (size_t cut : {size_t{100}, bytes.size() / 2, bytes.size() - 10}) {
    auto r = ElfReader::parse(bytes.substr(0, cut));
    EXPECT_FALSE(r.ok()) << "cut at " << cut;
  }
}

}  // namespace
}  // namespace kiln::compiler
