#include "kiln/ptx/types.h"

#include <gtest/gtest.h>

namespace kiln::ptx {
namespace {

TEST(Types, RoundTripsTypeNames) {
  for (std::string_view name : {"pred", "b8", "b128", "u32", "s64", "f16x2", "bf16", "tf32", "f64",
                                "e4m3x2", "e2m1", "ue8m0x2"}) {
    std::optional<Type> t = type_from_name(name);
    ASSERT_TRUE(t) << name;
    EXPECT_EQ(type_name(*t), name);
  }
  EXPECT_FALSE(type_from_name("x4"));
  EXPECT_FALSE(type_from_name("f4e"));
}

TEST(Types, KnowsSizesAndClasses) {
  EXPECT_EQ(type_bits(Type::F16x2), 32u);
  EXPECT_EQ(type_bits(Type::B128), 128u);
  EXPECT_TRUE(is_float_type(Type::BF16));
  EXPECT_FALSE(is_float_type(Type::U32));
  EXPECT_TRUE(is_signed_type(Type::S8));
}

TEST(Types, RoundTripsStateSpacesIncludingScopedOnes) {
  EXPECT_EQ(state_space_from_name("shared::cluster"), StateSpace::SharedCluster);
  EXPECT_EQ(state_space_name(StateSpace::ParamEntry), "param::entry");
  EXPECT_TRUE(is_shared_space(StateSpace::SharedCta));
  EXPECT_TRUE(is_param_space(StateSpace::ParamFunc));
  EXPECT_FALSE(state_space_from_name("sync"));
}

TEST(Types, RoundTripsLinkage) {
  EXPECT_EQ(linkage_from_name("weak"), Linkage::Weak);
  EXPECT_EQ(linkage_name(Linkage::Visible), "visible");
  EXPECT_FALSE(linkage_from_name("entry"));
}

}  // namespace
}  // namespace kiln::ptx
