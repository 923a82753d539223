// compile_flags.h: the allow-list of nvcc flags an agent may add.
#include "kiln/compiler/compile_flags.h"

#include <gtest/gtest.h>

namespace kiln::compiler {
namespace {

using Flags = std::vector<std::string>;

TEST(CompileFlags, AcceptsTheAllowedFlagsInNvccForm) {
  auto flags =
      checked_flags({"BLOCK=128", "USE_TMA"}, {"-DSTAGES=3", "-maxrregcount=128", "--use_fast_math",
                                               "-Xptxas -O2", "-Xptxas=-O1", "-Xptxas", "-O0"});
  ASSERT_TRUE(flags.ok()) << flags.error().message;
  EXPECT_EQ(*flags,
            (Flags{"-DBLOCK=128", "-DUSE_TMA", "-DSTAGES=3", "-maxrregcount=128", "--use_fast_math",
                   "-Xptxas", "-O2", "-Xptxas", "-O1", "-Xptxas", "-O0"}));
}

TEST(CompileFlags, RefusesFlagsOutsideTheListNamingThemAndWhatIsAllowed) {
  for (const char* bad : {"-G", "-arch=sm_80", "-Xcompiler -fopenmp", "-o/tmp/x", "-I/etc",
                          "--keep", "-Xptxas -O9", "-lcublas", "-ccbin=/bin/sh"}) {
    auto flags = checked_flags({}, {bad});
    ASSERT_FALSE(flags.ok()) << bad;
    EXPECT_NE(flags.error().message.find(bad), std::string::npos) << flags.error().message;
    EXPECT_NE(flags.error().message.find("allowed"), std::string::npos);
  }
}

TEST(CompileFlags, RefusesDefinesThatCouldInjectArguments) {
  EXPECT_FALSE(checked_flags({"X=1 -G"}, {}).ok());
  EXPECT_FALSE(checked_flags({"1X"}, {}).ok());
  EXPECT_FALSE(checked_flags({"X=\"s\""}, {}).ok());
  EXPECT_FALSE(checked_flags({}, {"-DX=$(id)"}).ok());
  EXPECT_FALSE(checked_flags({}, {"-Xptxas"}).ok());  // nothing after it
}

TEST(CompileFlags, MaxRegisterCountMustBeInRange) {
  EXPECT_FALSE(checked_flags({}, {"-maxrregcount=8"}).ok());
  EXPECT_FALSE(checked_flags({}, {"-maxrregcount=300"}).ok());
  EXPECT_TRUE(checked_flags({}, {"-maxrregcount=255"}).ok());
}

}  // namespace
}  // namespace kiln::compiler
