// Checks the quant_fp8_group128 reference (kb/zoo/references/src/quant_fp8_group128.cpp) on
// hand-worked groups: the scale, the quotient rounded to e4m3, saturation, the zero group.
#include <gtest/gtest.h>

#include "reference_test_util.h"

namespace kiln::zoo {
namespace {

using testing::call;
using testing::tensor;

// x[1, 256]: group 0 starts with `head`, the rest of the row is 0.
HostTensor row_with(std::initializer_list<double> head) {
  HostTensor x = tensor("x", KILN_BF16, {1, 256});
  int64_t i = 0;
  for (const double v : head) encode_element(KILN_BF16, x.bytes.data(), i++, v);
  return x;
}

TEST(QuantFp8Group128Reference, ScaleIsTheGroupsAbsMaxOver448AndQIsXOverTheScale) {
  // amax 3.5 gives scale 3.5 / 448 = 2^-7, so q = 128 x; 0.1 (bf16 0.10009765625) becomes
  // 12.8125, which rounds to the e4m3 value 13. Group 1 is all zero: scale 1, q 0.
  HostTensor x = row_with({3.5, -1.75, 0.5, 0.1});
  HostTensor q = tensor("q", KILN_E4M3, {1, 256});
  HostTensor scales = tensor("scales", KILN_F32, {1, 2});
  ASSERT_EQ(call("quant_fp8_group128", {&x, &q, &scales}), KILN_OK);
  EXPECT_EQ(scales.at(0), 0x1p-7);
  EXPECT_EQ(scales.at(1), 1.0);
  EXPECT_EQ(q.at(0), 448);
  EXPECT_EQ(q.at(1), -224);
  EXPECT_EQ(q.at(2), 64);
  EXPECT_EQ(q.at(3), 13);
  for (int64_t c = 128; c < 256; ++c) EXPECT_EQ(q.at(c), 0) << c;
}

TEST(QuantFp8Group128Reference, DividesByTheF32ScaleAndSaturatesAt448) {
  // 1/448 is not an f32; the stored scale is its rounding, and 1 / that rounds (and, if just
  // above 448, saturates) to 448, never to NaN.
  HostTensor x = row_with({1, -1, 0.25});
  HostTensor q = tensor("q", KILN_E4M3, {1, 256});
  HostTensor scales = tensor("scales", KILN_F32, {1, 2});
  ASSERT_EQ(call("quant_fp8_group128", {&x, &q, &scales}), KILN_OK);
  EXPECT_EQ(scales.at(0), static_cast<double>(static_cast<float>(1.0 / 448.0)));
  EXPECT_EQ(q.at(0), 448);
  EXPECT_EQ(q.at(1), -448);
  EXPECT_EQ(q.at(2), 112);
}

TEST(QuantFp8Group128Reference, GroupsAreOneRowsChannelsNotColumns) {
  // Two rows: each row's group has its own scale.
  HostTensor x = tensor("x", KILN_BF16, {2, 128});
  encode_element(KILN_BF16, x.bytes.data(), 0, 7);
  encode_element(KILN_BF16, x.bytes.data(), 128, 0.875);
  HostTensor q = tensor("q", KILN_E4M3, {2, 128});
  HostTensor scales = tensor("scales", KILN_F32, {2, 1});
  ASSERT_EQ(call("quant_fp8_group128", {&x, &q, &scales}), KILN_OK);
  EXPECT_EQ(scales.at(0), 7.0 / 448);
  EXPECT_EQ(scales.at(1), 0.875 / 448);
  EXPECT_EQ(q.at(0), 448);
  EXPECT_EQ(q.at(128), 448);
}

TEST(QuantFp8Group128Reference, RejectsHNotAMultipleOf128AndMismatchedOutputs) {
  HostTensor x = tensor("x", KILN_BF16, {1, 192});
  HostTensor q = tensor("q", KILN_E4M3, {1, 192});
  HostTensor scales = tensor("scales", KILN_F32, {1, 1});
  EXPECT_EQ(call("quant_fp8_group128", {&x, &q, &scales}), KILN_ERR_BAD_ARGUMENT);
  HostTensor x2 = tensor("x", KILN_BF16, {1, 256});
  HostTensor q2 = tensor("q", KILN_E4M3, {1, 256});
  HostTensor wrong_scales = tensor("scales", KILN_F32, {1, 1});
  EXPECT_EQ(call("quant_fp8_group128", {&x2, &q2, &wrong_scales}), KILN_ERR_BAD_ARGUMENT);
  HostTensor bf16_q = tensor("q", KILN_BF16, {1, 256});
  HostTensor scales2 = tensor("scales", KILN_F32, {1, 2});
  EXPECT_EQ(call("quant_fp8_group128", {&x2, &bf16_q, &scales2}), KILN_ERR_BAD_ARGUMENT);
}

}  // namespace
}  // namespace kiln::zoo
