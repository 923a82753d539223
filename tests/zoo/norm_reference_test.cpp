// Checks the rmsnorm and layernorm references (kb/zoo/references/src/norm.cpp).
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

TEST(RmsnormReference, DividesByRootMeanSquareAndScales) {
  // Row 0: all 2s, rms 2, so y = w. Row 1: [3, 4, 0, 0] has mean square 25/4, rms 2.5.
  HostTensor x = tensor("x", KILN_BF16, {2, 4}, {2, 2, 2, 2, 3, 4, 0, 0});
  HostTensor w = tensor("w", KILN_BF16, {4}, {1, 2, 0.5, -1});
  HostTensor y = tensor("y", KILN_BF16, {2, 4});
  ASSERT_EQ(call("rmsnorm", {&x, &w, &y}, {f64("eps", 0)}), KILN_OK);
  EXPECT_EQ(values(y), (V{1, 2, 0.5, -1, bf16_to_float(double_to_bf16(1.2)),
                          bf16_to_float(double_to_bf16(3.2)), 0, 0}));
}

TEST(RmsnormReference, AddsEpsInsideTheRoot) {
  HostTensor x = tensor("x", KILN_BF16, {1, 2}, {0, 0});
  HostTensor w = tensor("w", KILN_BF16, {2}, {1, 1});
  HostTensor y = tensor("y", KILN_BF16, {1, 2}, {7, 7});
  ASSERT_EQ(call("rmsnorm", {&x, &w, &y}, {f64("eps", 1e-6)}), KILN_OK);
  EXPECT_EQ(values(y), (V{0, 0}));
  HostTensor x1 = tensor("x", KILN_BF16, {1, 1}, {1});
  HostTensor w1 = tensor("w", KILN_BF16, {1}, {1});
  HostTensor y1 = tensor("y", KILN_BF16, {1, 1});
  ASSERT_EQ(call("rmsnorm", {&x1, &w1, &y1}, {f64("eps", 3)}), KILN_OK);
  EXPECT_EQ(y1.at(0), 0.5);  // 1 / sqrt(1 + 3)
}

TEST(RmsnormReference, RejectsBadArguments) {
  HostTensor x = tensor("x", KILN_BF16, {2, 4});
  HostTensor w = tensor("w", KILN_BF16, {4});
  HostTensor w3 = tensor("w", KILN_BF16, {3});
  HostTensor y = tensor("y", KILN_BF16, {2, 4});
  HostTensor y_f32 = tensor("y", KILN_F32, {2, 4});
  EXPECT_EQ(call("rmsnorm", {&x, &w, &y}, {f64("eps", 1e-6)}), KILN_OK);
  EXPECT_EQ(call("rmsnorm", {&x, &w, &y}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("rmsnorm", {&x, &w, &y}, {testing::i64("eps", 0)}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("rmsnorm", {&x, &w, &y}, {f64("epsilon", 1e-6)}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("rmsnorm", {&x, &w3, &y}, {f64("eps", 1e-6)}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("rmsnorm", {&x, &w, &y_f32}, {f64("eps", 1e-6)}), KILN_ERR_BAD_ARGUMENT);
}

TEST(LayernormReference, CentersScalesAndShifts) {
  // [1, 3]: mean 2, biased variance 1.
  HostTensor x = tensor("x", KILN_BF16, {1, 2}, {1, 3});
  HostTensor gamma = tensor("gamma", KILN_BF16, {2}, {1, 2});
  HostTensor beta = tensor("beta", KILN_BF16, {2}, {0, 0.5});
  HostTensor y = tensor("y", KILN_BF16, {1, 2});
  ASSERT_EQ(call("layernorm", {&x, &gamma, &beta, &y}, {f64("eps", 0)}), KILN_OK);
  EXPECT_EQ(values(y), (V{-1, 2.5}));
  ASSERT_EQ(call("layernorm", {&x, &gamma, &beta, &y}, {f64("eps", 3)}), KILN_OK);
  EXPECT_EQ(values(y), (V{-0.5, 1.5}));  // / sqrt(1 + 3)
}

TEST(LayernormReference, RejectsBadArguments) {
  HostTensor x = tensor("x", KILN_BF16, {2, 4});
  HostTensor g = tensor("gamma", KILN_BF16, {4});
  HostTensor b = tensor("beta", KILN_BF16, {4});
  HostTensor b5 = tensor("beta", KILN_BF16, {5});
  HostTensor y = tensor("y", KILN_BF16, {2, 4});
  EXPECT_EQ(call("layernorm", {&x, &g, &b, &y}, {f64("eps", 1e-5)}), KILN_OK);
  EXPECT_EQ(call("layernorm", {&x, &g, &y}, {f64("eps", 1e-5)}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("layernorm", {&x, &g, &b5, &y}, {f64("eps", 1e-5)}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("layernorm", {&x, &g, &b, &y}, {}), KILN_ERR_BAD_ARGUMENT);
}

}  // namespace
}  // namespace kiln::zoo
