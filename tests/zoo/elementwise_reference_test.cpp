// Checks the small references: reduce_sum, transpose, scan, topk and silu_mul
// (kb/zoo/references/src/{reduce_sum,transpose,scan,topk,silu_mul}.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "reference_test_util.h"

namespace kiln::zoo {
namespace {

using testing::call;
using testing::tensor;
using testing::values;
using V = std::vector<double>;

TEST(ReduceSumReference, SumsInDouble) {
  HostTensor x = tensor("x", KILN_F32, {3}, {1, 2, 3.5});
  HostTensor y = tensor("y", KILN_F32, {1});
  ASSERT_EQ(call("reduce_sum", {&x, &y}), KILN_OK);
  EXPECT_EQ(y.at(0), 6.5);
  // 2^25 + 1 - 2^25: a float accumulator loses the 1.
  HostTensor big = tensor("x", KILN_F32, {3}, {std::ldexp(1, 25), 1, -std::ldexp(1, 25)});
  ASSERT_EQ(call("reduce_sum", {&big, &y}), KILN_OK);
  EXPECT_EQ(y.at(0), 1.0);
  HostTensor empty = tensor("x", KILN_F32, {0});
  ASSERT_EQ(call("reduce_sum", {&empty, &y}), KILN_OK);
  EXPECT_EQ(y.at(0), 0.0);
}

TEST(ReduceSumReference, RejectsBadArguments) {
  HostTensor x = tensor("x", KILN_F32, {3});
  HostTensor y2 = tensor("y", KILN_F32, {2});
  HostTensor x_i32 = tensor("x", KILN_I32, {3});
  HostTensor y = tensor("y", KILN_F32, {1});
  EXPECT_EQ(call("reduce_sum", {&x, &y2}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("reduce_sum", {&x_i32, &y}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("reduce_sum", {&x}), KILN_ERR_BAD_ARGUMENT);
}

TEST(TransposeReference, SwapsRowsAndColumns) {
  HostTensor x = tensor("x", KILN_F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor y = tensor("y", KILN_F32, {3, 2});
  ASSERT_EQ(call("transpose", {&x, &y}), KILN_OK);
  EXPECT_EQ(values(y), (V{1, 4, 2, 5, 3, 6}));
  HostTensor y_wrong = tensor("y", KILN_F32, {2, 3});
  EXPECT_EQ(call("transpose", {&x, &y_wrong}), KILN_ERR_BAD_ARGUMENT);
}

TEST(ScanReference, InclusivePrefixSumWraps) {
  HostTensor x = tensor("x", KILN_I32, {3}, {1, 2, 3});
  HostTensor y = tensor("y", KILN_I32, {3});
  ASSERT_EQ(call("scan", {&x, &y}), KILN_OK);
  EXPECT_EQ(values(y), (V{1, 3, 6}));
  HostTensor near_max = tensor("x", KILN_I32, {2}, {std::numeric_limits<int32_t>::max(), 1});
  HostTensor wrapped = tensor("y", KILN_I32, {2});
  ASSERT_EQ(call("scan", {&near_max, &wrapped}), KILN_OK);
  EXPECT_EQ(values(wrapped),
            (V{std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min()}));
  HostTensor y_f32 = tensor("y", KILN_F32, {3});
  HostTensor y_short = tensor("y", KILN_I32, {2});
  EXPECT_EQ(call("scan", {&x, &y_f32}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("scan", {&x, &y_short}), KILN_ERR_BAD_ARGUMENT);
}

TEST(TopkReference, ReturnsLargestDescendingWithTiesByLowerIndex) {
  HostTensor x = tensor("x", KILN_F32, {2, 5}, {1, 3, 3, 2, 3, -1, -2, 0, -0.5, 7});
  HostTensor v = tensor("values", KILN_F32, {2, 4});
  HostTensor i = tensor("indices", KILN_I32, {2, 4});
  ASSERT_EQ(call("topk", {&x, &v, &i}), KILN_OK);
  EXPECT_EQ(values(v), (V{3, 3, 3, 2, 7, 0, -0.5, -1}));
  EXPECT_EQ(values(i), (V{1, 2, 4, 3, 4, 2, 3, 0}));
}

TEST(TopkReference, CountsNaNAsLargest) {
  HostTensor x = tensor("x", KILN_F32, {1, 3}, {1, std::nan(""), 2});
  HostTensor v = tensor("values", KILN_F32, {1, 2});
  HostTensor i = tensor("indices", KILN_I32, {1, 2});
  ASSERT_EQ(call("topk", {&x, &v, &i}), KILN_OK);
  EXPECT_TRUE(std::isnan(v.at(0)));
  EXPECT_EQ(v.at(1), 2);
  EXPECT_EQ(values(i), (V{1, 2}));
}

TEST(TopkReference, RejectsBadArguments) {
  HostTensor x = tensor("x", KILN_F32, {2, 3});
  HostTensor v4 = tensor("values", KILN_F32, {2, 4});
  HostTensor i4 = tensor("indices", KILN_I32, {2, 4});
  HostTensor v = tensor("values", KILN_F32, {2, 2});
  HostTensor i_f32 = tensor("indices", KILN_F32, {2, 2});
  HostTensor i_rows = tensor("indices", KILN_I32, {1, 2});
  EXPECT_EQ(call("topk", {&x, &v4, &i4}), KILN_ERR_BAD_ARGUMENT);  // K > C
  EXPECT_EQ(call("topk", {&x, &v, &i_f32}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("topk", {&x, &v, &i_rows}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("topk", {&x, &v}), KILN_ERR_BAD_ARGUMENT);
}

TEST(SiluMulReference, MultipliesSiluOfGateByUp) {
  HostTensor gate = tensor("gate", KILN_BF16, {3}, {0, 1, -2});
  HostTensor up = tensor("up", KILN_BF16, {3}, {5, 2, 1});
  HostTensor y = tensor("y", KILN_BF16, {3});
  ASSERT_EQ(call("silu_mul", {&gate, &up, &y}), KILN_OK);
  const double silu1 = 1 / (1 + std::exp(-1.0));
  const double silu_m2 = -2 / (1 + std::exp(2.0));
  EXPECT_EQ(values(y), (V{0, bf16_to_float(double_to_bf16(2 * silu1)),
                          bf16_to_float(double_to_bf16(silu_m2))}));
  HostTensor up_short = tensor("up", KILN_BF16, {2});
  HostTensor y_f16 = tensor("y", KILN_F16, {3});
  EXPECT_EQ(call("silu_mul", {&gate, &up_short, &y}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("silu_mul", {&gate, &up, &y_f16}), KILN_ERR_BAD_ARGUMENT);
}

}  // namespace
}  // namespace kiln::zoo
