// Checks the mixture-of-experts references on hand-worked inputs: moe_gating_topk,
// moe_permute and moe_unpermute (kb/zoo/references/src/moe_*.cpp).
#include <gtest/gtest.h>

#include <cmath>

#include "reference_test_util.h"

namespace kiln::zoo {
namespace {

using testing::call;
using testing::i64;
using testing::tensor;
using testing::values;
using V = std::vector<double>;

TEST(MoeGatingTopkReference, PicksTheLargestLogitsWithTiesToTheLowerExpert) {
  // One token, E = 4: logits (0, ln 2, 0, ln 2). Softmax over all: (1, 2, 1, 2) / 6.
  HostTensor logits = tensor("logits", KILN_F32, {1, 4}, {0, std::log(2.0), 0, std::log(2.0)});
  HostTensor weights = tensor("weights", KILN_F32, {1, 3});
  HostTensor indices = tensor("indices", KILN_I32, {1, 3});
  ASSERT_EQ(call("moe_gating_topk", {&logits, &weights, &indices}, {i64("renormalize", 0)}),
            KILN_OK);
  EXPECT_EQ(values(indices), (V{1, 3, 0}));
  const V expected = {2.0 / 6, 2.0 / 6, 1.0 / 6};
  for (size_t i = 0; i < 3; ++i)
    EXPECT_FLOAT_EQ(static_cast<float>(weights.at(static_cast<int64_t>(i))),
                    static_cast<float>(expected[i]));
}

TEST(MoeGatingTopkReference, RenormalizedWeightsSumToOne) {
  HostTensor logits = tensor("logits", KILN_F32, {1, 4}, {0, std::log(2.0), 0, std::log(2.0)});
  HostTensor weights = tensor("weights", KILN_F32, {1, 3});
  HostTensor indices = tensor("indices", KILN_I32, {1, 3});
  ASSERT_EQ(call("moe_gating_topk", {&logits, &weights, &indices}, {i64("renormalize", 1)}),
            KILN_OK);
  EXPECT_FLOAT_EQ(static_cast<float>(weights.at(0)), 0.4f);
  EXPECT_FLOAT_EQ(static_cast<float>(weights.at(2)), 0.2f);
}

TEST(MoeGatingTopkReference, RejectsKAboveEAndABadRenormalizeFlag) {
  HostTensor logits = tensor("logits", KILN_F32, {1, 2});
  HostTensor weights = tensor("weights", KILN_F32, {1, 3});
  HostTensor indices = tensor("indices", KILN_I32, {1, 3});
  EXPECT_EQ(call("moe_gating_topk", {&logits, &weights, &indices}, {i64("renormalize", 0)}),
            KILN_ERR_BAD_ARGUMENT);
  HostTensor w1 = tensor("weights", KILN_F32, {1, 1});
  HostTensor i1 = tensor("indices", KILN_I32, {1, 1});
  EXPECT_EQ(call("moe_gating_topk", {&logits, &w1, &i1}, {i64("renormalize", 2)}),
            KILN_ERR_BAD_ARGUMENT);
}

TEST(MoePermuteReference, GroupsRowsByExpertInTokenOrder) {
  // T = 3 tokens of H = 1 (values 10, 20, 30), K = 2, E = 3 (expert 1 gets nobody).
  HostTensor x = tensor("x", KILN_BF16, {3, 1}, {10, 20, 30});
  HostTensor indices = tensor("indices", KILN_I32, {3, 2}, {2, 0, 0, 2, 2, 0});
  HostTensor sorted = tensor("x_sorted", KILN_BF16, {6, 1});
  HostTensor offsets = tensor("expert_offsets", KILN_I32, {4});
  HostTensor dest = tensor("dest_rows", KILN_I32, {3, 2});
  ASSERT_EQ(call("moe_permute", {&x, &indices, &sorted, &offsets, &dest}), KILN_OK);
  // Expert 0: (0,1) (1,0) (2,1); expert 2: (0,0) (1,1) (2,0).
  EXPECT_EQ(values(offsets), (V{0, 3, 3, 6}));
  EXPECT_EQ(values(sorted), (V{10, 20, 30, 10, 20, 30}));
  EXPECT_EQ(values(dest), (V{3, 0, 1, 4, 5, 2}));
}

TEST(MoePermuteReference, RejectsAnExpertOutsideTheOffsets) {
  HostTensor x = tensor("x", KILN_BF16, {1, 1}, {1});
  HostTensor indices = tensor("indices", KILN_I32, {1, 1}, {3});
  HostTensor sorted = tensor("x_sorted", KILN_BF16, {1, 1});
  HostTensor offsets = tensor("expert_offsets", KILN_I32, {4});  // E = 3
  HostTensor dest = tensor("dest_rows", KILN_I32, {1, 1});
  EXPECT_EQ(call("moe_permute", {&x, &indices, &sorted, &offsets, &dest}), KILN_ERR_BAD_ARGUMENT);
}

TEST(MoeUnpermuteReference, GathersEachTokensRowsWithItsWeights) {
  // T = 2, K = 2, H = 2; rows of y: r0 = (1, 2), r1 = (3, 4), r2 = (5, 6), r3 = (7, 8).
  HostTensor y = tensor("y", KILN_BF16, {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  HostTensor dest = tensor("dest_rows", KILN_I32, {2, 2}, {3, 0, 1, 2});
  HostTensor weights = tensor("weights", KILN_F32, {2, 2}, {0.5, 0.25, 1, -1});
  HostTensor out = tensor("out", KILN_BF16, {2, 2});
  ASSERT_EQ(call("moe_unpermute", {&y, &dest, &weights, &out}), KILN_OK);
  // Token 0: 0.5 r3 + 0.25 r0 = (3.75, 4.5); token 1: r1 - r2 = (-2, -2).
  EXPECT_EQ(values(out), (V{3.75, 4.5, -2, -2}));
  HostTensor outside = tensor("dest_rows", KILN_I32, {2, 2}, {4, 0, 1, 2});
  EXPECT_EQ(call("moe_unpermute", {&y, &outside, &weights, &out}), KILN_ERR_BAD_ARGUMENT);
}

}  // namespace
}  // namespace kiln::zoo
