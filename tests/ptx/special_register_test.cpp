#include "kiln/ptx/special_register.h"

#include <gtest/gtest.h>

namespace kiln::ptx {
namespace {

TEST(SpecialRegister, RecognizesNamesAndNumberedFamilies) {
  EXPECT_EQ(special_register_from_name("%tid"), SpecialRegister::Tid);
  EXPECT_EQ(special_register_from_name("%cluster_ctarank"), SpecialRegister::ClusterCtarank);
  EXPECT_EQ(special_register_from_name("%envreg31"), SpecialRegister::Envreg);
  EXPECT_EQ(special_register_from_name("%pm3"), SpecialRegister::Pm);
  EXPECT_EQ(special_register_from_name("%pm3_64"), SpecialRegister::Pm64);
  EXPECT_FALSE(special_register_from_name("%envreg"));
  EXPECT_FALSE(special_register_from_name("%r1"));
  EXPECT_FALSE(special_register_from_name("%tid.x"));  // components are split off first
}

TEST(SpecialRegister, SaysHowEachVariesAcrossThreads) {
  EXPECT_EQ(special_register_variance(SpecialRegister::Tid), ThreadVariance::PerThread);
  EXPECT_EQ(special_register_variance(SpecialRegister::Laneid), ThreadVariance::PerThread);
  EXPECT_EQ(special_register_variance(SpecialRegister::LanemaskLt), ThreadVariance::PerThread);
  EXPECT_EQ(special_register_variance(SpecialRegister::Clock64), ThreadVariance::PerThread);
  EXPECT_EQ(special_register_variance(SpecialRegister::Warpid), ThreadVariance::PerWarp);
  EXPECT_EQ(special_register_variance(SpecialRegister::Ctaid), ThreadVariance::Uniform);
  EXPECT_EQ(special_register_variance(SpecialRegister::Nctaid), ThreadVariance::Uniform);
  EXPECT_EQ(special_register_variance(SpecialRegister::Ntid), ThreadVariance::Uniform);
  EXPECT_EQ(special_register_variance(SpecialRegister::ClusterCtarank), ThreadVariance::Uniform);
}

}  // namespace
}  // namespace kiln::ptx
