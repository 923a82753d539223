// gpu_arch.h: architecture names and -gencode flags.
#include "kiln/compiler/gpu_arch.h"

#include <gtest/gtest.h>

namespace kiln::compiler {
namespace {

TEST(GpuArch, ParsesArchNames) {
  auto hopper = parse_gpu_arch("sm_90a");
  ASSERT_TRUE(hopper.ok());
  EXPECT_EQ(hopper->major, 9);
  EXPECT_EQ(hopper->minor, 0);
  EXPECT_EQ(hopper->suffix, "a");
  EXPECT_EQ(hopper->name(), "sm_90a");
  EXPECT_EQ(hopper->virtual_name(), "compute_90a");
  auto blackwell = parse_gpu_arch("sm_100a");
  ASSERT_TRUE(blackwell.ok());
  EXPECT_EQ(blackwell->major, 10);
  EXPECT_EQ(blackwell->name(), "sm_100a");
}

TEST(GpuArch, RefusesAnythingElseSayingTheForm) {
  for (const char* bad : {"hopper", "sm_90a; rm -rf /", "compute_90", "sm_", "sm_9"}) {
    auto parsed = parse_gpu_arch(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.error().message.find("sm_90a"), std::string::npos);
  }
}

TEST(GpuArch, GencodeEmbedsPtxOnlyForPortableArchsWhenAsked) {
  EXPECT_EQ(gencode_flags(*parse_gpu_arch("sm_90a"), true),
            std::vector<std::string>{"-gencode=arch=compute_90a,code=sm_90a"});
  EXPECT_EQ(gencode_flags(*parse_gpu_arch("sm_80"), true),
            (std::vector<std::string>{"-gencode=arch=compute_80,code=sm_80",
                                      "-gencode=arch=compute_80,code=compute_80"}));
  EXPECT_EQ(gencode_flags(*parse_gpu_arch("sm_80"), false),
            std::vector<std::string>{"-gencode=arch=compute_80,code=sm_80"});
}

}  // namespace
}  // namespace kiln::compiler
