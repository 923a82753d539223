// toolchain.h: finding nvcc and its version.
#include "kiln/compiler/toolchain.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace kiln::compiler {
namespace {

TEST(Toolchain, KilnNvccOverridesTheCudaRoot) {
  setenv("KILN_CUDA_ROOT", "/opt/cuda-x", 1);
  setenv("KILN_NVCC", "/opt/other/nvcc", 1);
  const Toolchain toolchain = toolchain_from_environment();
  EXPECT_EQ(toolchain.cuda_root, std::filesystem::path("/opt/cuda-x"));
  EXPECT_EQ(toolchain.nvcc, std::filesystem::path("/opt/other/nvcc"));
  unsetenv("KILN_NVCC");
  EXPECT_EQ(toolchain_from_environment().nvcc, std::filesystem::path("/opt/cuda-x/bin/nvcc"));
  unsetenv("KILN_CUDA_ROOT");
}

TEST(Toolchain, MissingNvccIsAnErrorThatSaysWhatToSet) {
  setenv("KILN_NVCC", "/nonexistent/nvcc", 1);
  auto probed = probe_toolchain();
  unsetenv("KILN_NVCC");
  ASSERT_FALSE(probed.ok());
  EXPECT_NE(probed.error().message.find("KILN_CUDA_ROOT"), std::string::npos);
}

TEST(Toolchain, ProbeReadsTheNvccVersion) {
  if (!KILN_TEST_HAVE_NVCC) GTEST_SKIP() << "no CUDA toolkit";
  auto probed = probe_toolchain();
  ASSERT_TRUE(probed.ok()) << probed.error().message;
  EXPECT_NE(probed->nvcc_version.find("release"), std::string::npos) << probed->nvcc_version;
}

}  // namespace
}  // namespace kiln::compiler
