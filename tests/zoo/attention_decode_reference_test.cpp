// Checks the attention_decode reference (kb/zoo/references/src/attention_decode.cpp) on
// hand-worked inputs: grouped query heads, the softmax over the cache, argument checks.
#include <gtest/gtest.h>

#include <cmath>

#include "reference_test_util.h"

namespace kiln::zoo {
namespace {

using testing::call;
using testing::f64;
using testing::tensor;
using testing::values;
using V = std::vector<double>;

TEST(AttentionDecodeReference, QueryHeadsOfAGroupReadTheirSharedKvHead) {
  // B = 1, HQ = 2 query heads sharing HK = 1 KV head, S = 2 cached keys, D = 2.
  HostTensor q = tensor("Q", KILN_BF16, {1, 2, 2}, {1, 0, 0, 0});
  HostTensor k = tensor("K", KILN_BF16, {1, 1, 2, 2}, {1, 0, 0, 0});
  HostTensor v = tensor("V", KILN_BF16, {1, 1, 2, 2}, {2, 0, 0, 4});
  HostTensor o = tensor("O", KILN_BF16, {1, 2, 2});
  ASSERT_EQ(call("attention_decode", {&q, &k, &v, &o}, {f64("scale", std::log(3.0))}), KILN_OK);
  // Head 0: scores (ln 3, 0) -> p = (3/4, 1/4): O = (1.5, 1). Head 1: scores 0 -> (1, 2).
  EXPECT_EQ(values(o), (V{1.5, 1, 1, 2}));
}

TEST(AttentionDecodeReference, SecondKvHeadServesTheSecondGroup) {
  // HQ = 2, HK = 2: query head 1 reads KV head 1 only.
  HostTensor q = tensor("Q", KILN_F16, {1, 2, 1}, {0, 0});
  HostTensor k = tensor("K", KILN_F16, {1, 2, 1, 1}, {0, 0});
  HostTensor v = tensor("V", KILN_F16, {1, 2, 1, 1}, {3, -5});
  HostTensor o = tensor("O", KILN_F16, {1, 2, 1});
  ASSERT_EQ(call("attention_decode", {&q, &k, &v, &o}, {f64("scale", 1)}), KILN_OK);
  EXPECT_EQ(values(o), (V{3, -5}));
}

TEST(AttentionDecodeReference, RejectsHeadsThatDoNotGroupAndMixedDtypes) {
  HostTensor q = tensor("Q", KILN_BF16, {1, 3, 2});
  HostTensor k = tensor("K", KILN_BF16, {1, 2, 4, 2});
  HostTensor v = tensor("V", KILN_BF16, {1, 2, 4, 2});
  HostTensor o = tensor("O", KILN_BF16, {1, 3, 2});
  EXPECT_EQ(call("attention_decode", {&q, &k, &v, &o}, {f64("scale", 1)}), KILN_ERR_BAD_ARGUMENT);
  HostTensor q2 = tensor("Q", KILN_BF16, {1, 2, 2});
  HostTensor o2 = tensor("O", KILN_F16, {1, 2, 2});
  EXPECT_EQ(call("attention_decode", {&q2, &k, &v, &o2}, {f64("scale", 1)}), KILN_ERR_BAD_ARGUMENT);
  HostTensor o3 = tensor("O", KILN_BF16, {1, 2, 2});
  EXPECT_EQ(call("attention_decode", {&q2, &k, &v, &o3}), KILN_ERR_BAD_ARGUMENT);  // no scale
}

}  // namespace
}  // namespace kiln::zoo
