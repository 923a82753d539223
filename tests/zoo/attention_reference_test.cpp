// Checks the attention_fwd reference (kb/zoo/references/src/attention.cpp).
#include <gtest/gtest.h>

#include <cmath>

#include "reference_test_util.h"

namespace kiln::zoo {
namespace {

using testing::call;
using testing::call_rows;
using testing::f64;
using testing::filled;
using testing::i64;
using testing::tensor;
using testing::values;
using V = std::vector<double>;

// One head, S = 2, D = 1: both queries are 1, keys 0 and 1, values 3 and 6. With
// scale = ln 2 the scores are [0, ln 2], so the weights are [1/3, 2/3] and the output 5.
struct TinyAttention {
  explicit TinyAttention(kiln_dtype dtype)
      : q(tensor("Q", dtype, {1, 1, 2, 1}, {1, 1})),
        k(tensor("K", dtype, {1, 1, 2, 1}, {0, 1})),
        v(tensor("V", dtype, {1, 1, 2, 1}, {3, 6})),
        o(filled("O", dtype, {1, 1, 2, 1}, -1)) {}
  HostTensor q, k, v, o;
};

TEST(AttentionFwdReference, WeightsValuesBySoftmaxOfScaledScores) {
  for (const kiln_dtype dtype : {KILN_F16, KILN_BF16}) {
    TinyAttention t(dtype);
    ASSERT_EQ(call("attention_fwd", {&t.q, &t.k, &t.v, &t.o},
                   {i64("causal", 0), f64("scale", std::log(2.0))}),
              KILN_OK);
    EXPECT_EQ(values(t.o), (V{5, 5}));
  }
}

TEST(AttentionFwdReference, CausalMaskHidesLaterKeys) {
  TinyAttention t(KILN_F16);
  ASSERT_EQ(call("attention_fwd", {&t.q, &t.k, &t.v, &t.o},
                 {i64("causal", 1), f64("scale", std::log(2.0))}),
            KILN_OK);
  EXPECT_EQ(values(t.o), (V{3, 5}));  // query 0 sees only key 0
}

TEST(AttentionFwdReference, RowReferenceComputesOnlyChosenQueryRows) {
  TinyAttention t(KILN_BF16);
  ASSERT_EQ(call_rows("attention_fwd", {&t.q, &t.k, &t.v, &t.o}, {1},
                      {i64("causal", 1), f64("scale", std::log(2.0))}),
            KILN_OK);
  EXPECT_EQ(values(t.o), (V{-1, 5}));
  EXPECT_EQ(call_rows("attention_fwd", {&t.q, &t.k, &t.v, &t.o}, {2},
                      {i64("causal", 1), f64("scale", 1)}),
            KILN_ERR_BAD_ARGUMENT);
}

TEST(AttentionFwdReference, HeadsAreIndependent) {
  // B = 1, H = 2, S = 1, D = 2: with one key, each output row is its head's value row.
  HostTensor q = tensor("Q", KILN_F16, {1, 2, 1, 2}, {1, 2, 3, 4});
  HostTensor k = tensor("K", KILN_F16, {1, 2, 1, 2}, {5, 6, 7, 8});
  HostTensor v = tensor("V", KILN_F16, {1, 2, 1, 2}, {0.5, -1, 2, 4});
  HostTensor o = tensor("O", KILN_F16, {1, 2, 1, 2});
  ASSERT_EQ(call("attention_fwd", {&q, &k, &v, &o}, {i64("causal", 0), f64("scale", 0.125)}),
            KILN_OK);
  EXPECT_EQ(values(o), (V{0.5, -1, 2, 4}));
}

TEST(AttentionFwdReference, RejectsBadArguments) {
  TinyAttention t(KILN_F16);
  HostTensor v_bf16 = tensor("V", KILN_BF16, {1, 1, 2, 1});
  HostTensor o_long = tensor("O", KILN_F16, {1, 1, 3, 1});
  const std::vector<kiln_scalar> good = {i64("causal", 1), f64("scale", 1)};
  EXPECT_EQ(call("attention_fwd", {&t.q, &t.k, &t.v, &t.o}, good), KILN_OK);
  EXPECT_EQ(call("attention_fwd", {&t.q, &t.k, &t.v, &t.o}, {i64("causal", 2), f64("scale", 1)}),
            KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("attention_fwd", {&t.q, &t.k, &t.v, &t.o}, {f64("scale", 1), i64("causal", 1)}),
            KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("attention_fwd", {&t.q, &t.k, &t.v, &t.o}, {i64("causal", 1)}),
            KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("attention_fwd", {&t.q, &t.k, &t.v, &t.o}, {i64("causal", 1), f64("alpha", 1)}),
            KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("attention_fwd", {&t.q, &t.k, &v_bf16, &t.o}, good), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("attention_fwd", {&t.q, &t.k, &t.v, &o_long}, good), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("attention_fwd", {&t.q, &t.k, &t.v}, good), KILN_ERR_BAD_ARGUMENT);
}

}  // namespace
}  // namespace kiln::zoo
