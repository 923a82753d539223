// Checks the references of the memory-bound fusions on hand-worked inputs: swiglu,
// cross_entropy, rope and add_rmsnorm_fp8 (kb/zoo/references/src/{swiglu,cross_entropy,rope,
// add_rmsnorm_fp8}.cpp).
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

double silu(double g) { return g / (1 + std::exp(-g)); }

TEST(SwigluReference, GateIsTheFirstHalfOfEachRowAndUpTheSecond) {
  // Two rows of [gate0 gate1 | up0 up1].
  HostTensor x = tensor("x", KILN_BF16, {2, 4}, {1, -2, 3, 0.5, 0, 4, 2, -1});
  HostTensor y = tensor("y", KILN_BF16, {2, 2});
  ASSERT_EQ(call("swiglu", {&x, &y}), KILN_OK);
  const V expected = {silu(1) * 3, silu(-2) * 0.5, silu(0) * 2, silu(4) * -1};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(y.at(static_cast<int64_t>(i)), bf16_to_float(double_to_bf16(expected[i])));
  }
}

TEST(SwigluReference, RejectsAnOutputThatIsNotHalfTheRow) {
  HostTensor x = tensor("x", KILN_BF16, {2, 4});
  HostTensor wide = tensor("y", KILN_BF16, {2, 4});
  HostTensor odd = tensor("x", KILN_BF16, {2, 3});
  HostTensor y = tensor("y", KILN_BF16, {2, 1});
  EXPECT_EQ(call("swiglu", {&x, &wide}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("swiglu", {&odd, &y}), KILN_ERR_BAD_ARGUMENT);
}

TEST(CrossEntropyReference, IsLogSumExpMinusTheTargetLogit) {
  HostTensor logits = tensor("logits", KILN_BF16, {2, 3}, {0, 0, 0, 1, 2, 3});
  HostTensor targets = tensor("targets", KILN_I32, {2}, {1, 0});
  HostTensor loss = tensor("loss", KILN_F32, {2});
  ASSERT_EQ(call("cross_entropy", {&logits, &targets, &loss}), KILN_OK);
  EXPECT_FLOAT_EQ(static_cast<float>(loss.at(0)), static_cast<float>(std::log(3.0)));
  const double lse = 3 + std::log(std::exp(-2.0) + std::exp(-1.0) + 1);
  EXPECT_FLOAT_EQ(static_cast<float>(loss.at(1)), static_cast<float>(lse - 1));
}

TEST(CrossEntropyReference, StaysFiniteForLargeLogitsAndRejectsTargetsOutsideTheVocabulary) {
  // exp(1000) overflows a double; subtracting the maximum first keeps it finite.
  HostTensor logits = tensor("logits", KILN_BF16, {1, 2}, {1000, 1000});
  HostTensor targets = tensor("targets", KILN_I32, {1}, {0});
  HostTensor loss = tensor("loss", KILN_F32, {1});
  ASSERT_EQ(call("cross_entropy", {&logits, &targets, &loss}), KILN_OK);
  EXPECT_FLOAT_EQ(static_cast<float>(loss.at(0)), static_cast<float>(std::log(2.0)));
  HostTensor outside = tensor("targets", KILN_I32, {1}, {2});
  EXPECT_EQ(call("cross_entropy", {&logits, &outside, &loss}), KILN_ERR_BAD_ARGUMENT);
  HostTensor negative = tensor("targets", KILN_I32, {1}, {-1});
  EXPECT_EQ(call("cross_entropy", {&logits, &negative, &loss}), KILN_ERR_BAD_ARGUMENT);
}

TEST(RopeReference, RotatesElementIWithElementIPlusHalfAtTheTokensPosition) {
  // T = 2 tokens, one q head and one k head of D = 4: pairs (0, 2) and (1, 3).
  HostTensor q = tensor("q", KILN_BF16, {2, 1, 4}, {1, 2, 3, 4, 1, 0, 0, 1});
  HostTensor k = tensor("k", KILN_BF16, {2, 1, 4}, {0, 1, 1, 0, 2, 2, 2, 2});
  HostTensor positions = tensor("positions", KILN_I32, {2}, {1, 0});
  // Position 0: the identity. Position 1: 90 degrees for pair 0, 180 degrees for pair 1.
  HostTensor cos = tensor("cos", KILN_F32, {2, 2}, {1, 1, 0, -1});
  HostTensor sin = tensor("sin", KILN_F32, {2, 2}, {0, 0, 1, 0});
  HostTensor q_out = tensor("q_out", KILN_BF16, {2, 1, 4});
  HostTensor k_out = tensor("k_out", KILN_BF16, {2, 1, 4});
  ASSERT_EQ(call("rope", {&q, &k, &positions, &cos, &sin, &q_out, &k_out}), KILN_OK);
  // Token 0 at position 1: pair (1, 3) by 90 degrees -> (-3, 1); pair (2, 4) by 180 -> (-2, -4).
  // Token 1 at position 0: unchanged.
  EXPECT_EQ(values(q_out), (V{-3, -2, 1, -4, 1, 0, 0, 1}));
  EXPECT_EQ(values(k_out), (V{-1, -1, 0, 0, 2, 2, 2, 2}));
}

TEST(RopeReference, RejectsPositionsOutsideTheCacheAndAnOddHeadDim) {
  HostTensor q = tensor("q", KILN_BF16, {1, 1, 4});
  HostTensor k = tensor("k", KILN_BF16, {1, 1, 4});
  HostTensor outside = tensor("positions", KILN_I32, {1}, {2});
  HostTensor cos = tensor("cos", KILN_F32, {2, 2});
  HostTensor sin = tensor("sin", KILN_F32, {2, 2});
  HostTensor q_out = tensor("q_out", KILN_BF16, {1, 1, 4});
  HostTensor k_out = tensor("k_out", KILN_BF16, {1, 1, 4});
  EXPECT_EQ(call("rope", {&q, &k, &outside, &cos, &sin, &q_out, &k_out}), KILN_ERR_BAD_ARGUMENT);
  HostTensor q3 = tensor("q", KILN_BF16, {1, 1, 3});
  HostTensor k3 = tensor("k", KILN_BF16, {1, 1, 3});
  HostTensor at0 = tensor("positions", KILN_I32, {1}, {0});
  HostTensor cos1 = tensor("cos", KILN_F32, {2, 1});
  HostTensor sin1 = tensor("sin", KILN_F32, {2, 1});
  HostTensor q3_out = tensor("q_out", KILN_BF16, {1, 1, 3});
  HostTensor k3_out = tensor("k_out", KILN_BF16, {1, 1, 3});
  EXPECT_EQ(call("rope", {&q3, &k3, &at0, &cos1, &sin1, &q3_out, &k3_out}), KILN_ERR_BAD_ARGUMENT);
}

TEST(AddRmsnormFp8Reference, StoresTheSumNormalizesItAndQuantizesPerGroupOf128) {
  // One row of H = 256 (two groups): x + residual = 1 in group 0 and 2 in group 1.
  HostTensor x = testing::filled("x", KILN_BF16, {1, 256}, 0.5);
  HostTensor residual = testing::filled("residual", KILN_BF16, {1, 256}, 0.5);
  for (int64_t c = 128; c < 256; ++c) encode_element(KILN_BF16, residual.bytes.data(), c, 1.5);
  HostTensor w = testing::filled("w", KILN_BF16, {256}, 1);
  encode_element(KILN_BF16, w.bytes.data(), 5, 0.25);  // one smaller channel in group 0
  HostTensor residual_out = tensor("residual_out", KILN_BF16, {1, 256});
  HostTensor q = tensor("q", KILN_E4M3, {1, 256});
  HostTensor scales = tensor("scales", KILN_F32, {1, 2});
  ASSERT_EQ(
      call("add_rmsnorm_fp8", {&x, &residual, &w, &residual_out, &q, &scales}, {f64("eps", 0)}),
      KILN_OK);
  EXPECT_EQ(residual_out.at(0), 1.0);
  EXPECT_EQ(residual_out.at(200), 2.0);
  const double inverse_rms = 1 / std::sqrt((128 * 1.0 + 128 * 4.0) / 256);
  EXPECT_FLOAT_EQ(static_cast<float>(scales.at(0)), static_cast<float>(inverse_rms / 448));
  EXPECT_FLOAT_EQ(static_cast<float>(scales.at(1)), static_cast<float>(2 * inverse_rms / 448));
  // Each group's largest value maps to 448; the 0.25-weighted channel to 112.
  EXPECT_EQ(q.at(0), 448.0);
  EXPECT_EQ(q.at(5), 112.0);
  EXPECT_EQ(q.at(255), 448.0);
}

TEST(AddRmsnormFp8Reference, GivesAnAllZeroGroupScaleOneAndRejectsHNotAMultipleOf128) {
  HostTensor x = testing::filled("x", KILN_BF16, {1, 128}, 0);
  HostTensor residual = testing::filled("residual", KILN_BF16, {1, 128}, 0);
  HostTensor w = testing::filled("w", KILN_BF16, {128}, 1);
  HostTensor residual_out = tensor("residual_out", KILN_BF16, {1, 128});
  HostTensor q = testing::filled("q", KILN_E4M3, {1, 128}, 1);
  HostTensor scales = tensor("scales", KILN_F32, {1, 1});
  ASSERT_EQ(
      call("add_rmsnorm_fp8", {&x, &residual, &w, &residual_out, &q, &scales}, {f64("eps", 1e-6)}),
      KILN_OK);
  EXPECT_EQ(scales.at(0), 1.0);
  EXPECT_EQ(q.at(0), 0.0);
  HostTensor x64 = tensor("x", KILN_BF16, {1, 64});
  HostTensor r64 = tensor("residual", KILN_BF16, {1, 64});
  HostTensor w64 = tensor("w", KILN_BF16, {64});
  HostTensor o64 = tensor("residual_out", KILN_BF16, {1, 64});
  HostTensor q64 = tensor("q", KILN_E4M3, {1, 64});
  HostTensor s64 = tensor("scales", KILN_F32, {1, 0});
  EXPECT_EQ(call("add_rmsnorm_fp8", {&x64, &r64, &w64, &o64, &q64, &s64}, {f64("eps", 1e-6)}),
            KILN_ERR_BAD_ARGUMENT);
}

}  // namespace
}  // namespace kiln::zoo
