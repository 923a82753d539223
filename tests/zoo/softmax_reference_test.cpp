// Checks the softmax reference (kb/zoo/references/src/softmax.cpp).
#include <gtest/gtest.h>

#include <cmath>

#include "reference_test_util.h"

namespace kiln::zoo {
namespace {

using testing::call;
using testing::tensor;

TEST(SoftmaxReference, NormalizesEachRow) {
  // Row 0: [0, ln 2] -> [1/3, 2/3]. Row 1: large equal values stay finite -> [1/2, 1/2].
  HostTensor x = tensor("x", KILN_F32, {2, 2}, {0, std::log(2.0), 1000, 1000});
  HostTensor y = tensor("y", KILN_F32, {2, 2});
  ASSERT_EQ(call("softmax", {&x, &y}), KILN_OK);
  EXPECT_FLOAT_EQ(static_cast<float>(y.at(0)), 1.0f / 3);
  EXPECT_FLOAT_EQ(static_cast<float>(y.at(1)), 2.0f / 3);
  EXPECT_EQ(y.at(2), 0.5);
  EXPECT_EQ(y.at(3), 0.5);
}

TEST(SoftmaxReference, RejectsBadArguments) {
  HostTensor x = tensor("x", KILN_F32, {2, 3});
  HostTensor y = tensor("y", KILN_F32, {3, 2});
  HostTensor y_bf16 = tensor("y", KILN_BF16, {2, 3});
  HostTensor x1 = tensor("x", KILN_F32, {6});
  EXPECT_EQ(call("softmax", {&x, &y}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("softmax", {&x, &y_bf16}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("softmax", {&x1, &x1}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("softmax", {&x}), KILN_ERR_BAD_ARGUMENT);
}

}  // namespace
}  // namespace kiln::zoo
