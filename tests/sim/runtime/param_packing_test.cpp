#include "param_packing.h"

#include <gtest/gtest.h>

#include <cstring>

namespace kiln::sim::runtime {
namespace {

KernelInfo kernel_with(std::vector<ParamSlot> params, uint32_t bytes) {
  KernelInfo kernel;
  kernel.name = "k";
  kernel.params = std::move(params);
  kernel.param_bytes = bytes;
  return kernel;
}

TEST(ParamPacking, PlacesEachArgumentAtItsDeclaredOffset) {
  const KernelInfo kernel =
      kernel_with({{"a", 0, 4, 4}, {"p", 8, 8, 8}, {"c", 16, 1, 1}, {"s", 32, 16, 16}}, 48);
  int a = 0x11223344;
  uint64_t p = 0xdeadbeefcafef00dull;
  char c = 'z';
  unsigned char s[16];
  for (int i = 0; i < 16; ++i) s[i] = static_cast<unsigned char>(i + 1);
  void* args[] = {&a, &p, &c, s};
  auto packed = pack_params(kernel, args);
  ASSERT_TRUE(packed.ok()) << packed.error().message;
  ASSERT_EQ(packed->size(), 48u);
  int a_out = 0;
  uint64_t p_out = 0;
  std::memcpy(&a_out, packed->data(), 4);
  std::memcpy(&p_out, packed->data() + 8, 8);
  EXPECT_EQ(a_out, a);
  EXPECT_EQ(p_out, p);
  EXPECT_EQ(static_cast<char>((*packed)[16]), 'z');
  EXPECT_EQ(std::memcmp(packed->data() + 32, s, 16), 0);
  EXPECT_EQ((*packed)[5], std::byte{0});  // padding stays zero
}

TEST(ParamPacking, KernelWithoutParametersAcceptsNullArgs) {
  auto packed = pack_params(kernel_with({}, 0), nullptr);
  ASSERT_TRUE(packed.ok());
  EXPECT_TRUE(packed->empty());
}

TEST(ParamPacking, RejectsNullArgsWhenParametersAreDeclared) {
  auto packed = pack_params(kernel_with({{"a", 0, 4, 4}}, 4), nullptr);
  ASSERT_FALSE(packed.ok());
  EXPECT_NE(packed.error().message.find("void** args"), std::string::npos);
}

TEST(ParamPacking, RejectsNullArgumentPointer) {
  void* args[] = {nullptr};
  auto packed = pack_params(kernel_with({{"a", 0, 4, 4}}, 4), args);
  ASSERT_FALSE(packed.ok());
  EXPECT_NE(packed.error().message.find("null"), std::string::npos);
}

TEST(ParamPacking, RejectsSlotOutsideTheBuffer) {
  int a = 1;
  void* args[] = {&a};
  auto packed = pack_params(kernel_with({{"a", 4, 4, 4}}, 4), args);
  ASSERT_FALSE(packed.ok());
}

}  // namespace
}  // namespace kiln::sim::runtime
