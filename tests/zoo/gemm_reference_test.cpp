// Checks the gemm_tn, gemm_tn_fp8, gemm_tn_int8, grouped_gemm_tn and grouped_gemm_masked
// references (kb/zoo/references/src/gemm.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "reference_test_util.h"

namespace kiln::zoo {
namespace {

using testing::call;
using testing::call_rows;
using testing::filled;
using testing::tensor;
using testing::values;
using V = std::vector<double>;

TEST(GemmTnReference, Computes2x3ProductInF16AndBf16) {
  for (const kiln_dtype dtype : {KILN_F16, KILN_BF16}) {
    // A[2,2] · B[3,2]ᵀ
    HostTensor a = tensor("A", dtype, {2, 2}, {1, 2, 3, 4});
    HostTensor b = tensor("B", dtype, {3, 2}, {1, 0, 0, 1, 1, 1});
    HostTensor c = tensor("C", dtype, {2, 3});
    ASSERT_EQ(call("gemm_tn", {&a, &b, &c}), KILN_OK);
    EXPECT_EQ(values(c), (V{1, 2, 3, 3, 4, 7}));
  }
}

TEST(GemmTnReference, RoundsTheSumOnceToNearestEven) {
  // f16 spacing at 2048 is 2: 2049 is a tie (-> 2048), 2051 a tie (-> 2052).
  HostTensor a = tensor("A", KILN_F16, {2, 2}, {2048, 1, 2048, 3});
  HostTensor b = tensor("B", KILN_F16, {1, 2}, {1, 1});
  HostTensor c = tensor("C", KILN_F16, {2, 1});
  ASSERT_EQ(call("gemm_tn", {&a, &b, &c}), KILN_OK);
  EXPECT_EQ(values(c), (V{2048, 2052}));
}

TEST(GemmTnReference, AccumulatesBeyondFloatPrecision) {
  // 2^30 + 1 - 2^30 is 0 when summed in float, 1 in double.
  HostTensor a = tensor("A", KILN_BF16, {1, 3}, {std::ldexp(1, 30), 1, -std::ldexp(1, 30)});
  HostTensor b = tensor("B", KILN_BF16, {1, 3}, {1, 1, 1});
  HostTensor c = tensor("C", KILN_BF16, {1, 1});
  ASSERT_EQ(call("gemm_tn", {&a, &b, &c}), KILN_OK);
  EXPECT_EQ(c.at(0), 1.0);
}

TEST(GemmTnReference, MatchesNaiveLoopOnRandomShapes) {
  std::mt19937 random(3);
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (const auto& [M, N, K] :
       {std::tuple{5, 7, 9}, std::tuple{33, 17, 40}, std::tuple{4, 130, 3}}) {
    HostTensor a = make_host_tensor("A", KILN_BF16, {M, K});
    HostTensor b = make_host_tensor("B", KILN_BF16, {N, K});
    HostTensor c = make_host_tensor("C", KILN_BF16, {M, N});
    for (int64_t i = 0; i < M * K; ++i)
      encode_element(KILN_BF16, a.bytes.data(), i, uniform(random));
    for (int64_t i = 0; i < N * K; ++i)
      encode_element(KILN_BF16, b.bytes.data(), i, uniform(random));
    ASSERT_EQ(call("gemm_tn", {&a, &b, &c}), KILN_OK);
    for (int i = 0; i < M; ++i) {
      for (int j = 0; j < N; ++j) {
        double sum = 0;
        for (int k = 0; k < K; ++k) sum += a.at(i * K + k) * b.at(j * K + k);
        ASSERT_EQ(c.at(i * N + j), bf16_to_float(double_to_bf16(sum))) << i << "," << j;
      }
    }
  }
}

TEST(GemmTnReference, RowReferenceWritesOnlyTheChosenRows) {
  HostTensor a = tensor("A", KILN_F16, {3, 1}, {1, 2, 3});
  HostTensor b = tensor("B", KILN_F16, {2, 1}, {10, 100});
  HostTensor c = filled("C", KILN_F16, {3, 2}, -1);
  ASSERT_EQ(call_rows("gemm_tn", {&a, &b, &c}, {2, 0}), KILN_OK);
  EXPECT_EQ(values(c), (V{10, 100, -1, -1, 30, 300}));
  EXPECT_EQ(call_rows("gemm_tn", {&a, &b, &c}, {3}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call_rows("gemm_tn", {&a, &b, &c}, {1, 1}), KILN_ERR_BAD_ARGUMENT);
}

TEST(GemmTnReference, AcceptsStridedViews) {
  // C is the left 2x2 block of a 2x3 buffer (row stride 3).
  HostTensor a = tensor("A", KILN_F16, {2, 1}, {1, 2});
  HostTensor b = tensor("B", KILN_F16, {2, 1}, {3, 4});
  HostTensor buffer = filled("C", KILN_F16, {2, 3}, -1);
  auto descriptors = testing::describe({&a, &b, &buffer});
  descriptors[2].shape[1] = 2;
  ASSERT_EQ(reference_gemm_tn(descriptors.data(), 3, nullptr, 0), KILN_OK);
  EXPECT_EQ(values(buffer), (V{3, 4, -1, 6, 8, -1}));
}

TEST(GemmTnReference, RejectsBadArguments) {
  HostTensor a = tensor("A", KILN_F16, {2, 3});
  HostTensor b = tensor("B", KILN_F16, {4, 3});
  HostTensor c = tensor("C", KILN_F16, {2, 4});
  HostTensor b_bf16 = tensor("B", KILN_BF16, {4, 3});
  HostTensor b_short = tensor("B", KILN_F16, {4, 2});
  HostTensor c_wrong = tensor("C", KILN_F16, {4, 2});
  HostTensor a_f32 = tensor("A", KILN_F32, {2, 3});
  HostTensor c_f32 = tensor("C", KILN_F32, {2, 4});
  EXPECT_EQ(call("gemm_tn", {&a, &b, &c}), KILN_OK);
  EXPECT_EQ(call("gemm_tn", {&a, &b}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("gemm_tn", {&a, &b_bf16, &c}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("gemm_tn", {&a, &b_short, &c}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("gemm_tn", {&a, &b, &c_wrong}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("gemm_tn", {&a_f32, &b, &c}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("gemm_tn", {&a, &b, &c_f32}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("gemm_tn", {&a, &b, &c}, {testing::f64("alpha", 1)}), KILN_ERR_BAD_ARGUMENT);
  auto descriptors = testing::describe({&a, &b, &c});
  descriptors[0].data = nullptr;
  EXPECT_EQ(reference_gemm_tn(descriptors.data(), 3, nullptr, 0), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(reference_gemm_tn(nullptr, 3, nullptr, 0), KILN_ERR_BAD_ARGUMENT);
}

TEST(GemmTnFp8Reference, ScalesTheE4m3ProductIntoBf16) {
  HostTensor a = tensor("A", KILN_E4M3, {2, 2}, {1, 0.5, 448, 0});
  HostTensor b = tensor("B", KILN_E4M3, {1, 2}, {2, 4});
  HostTensor sa = tensor("scale_a", KILN_F32, {1}, {0.5});
  HostTensor sb = tensor("scale_b", KILN_F32, {1}, {0.25});
  HostTensor c = tensor("C", KILN_BF16, {2, 1});
  ASSERT_EQ(call("gemm_tn_fp8", {&a, &b, &sa, &sb, &c}), KILN_OK);
  EXPECT_EQ(values(c), (V{0.5, 112}));  // (2 + 2)/8, 896/8
}

TEST(GemmTnFp8Reference, UsesSubnormalE4m3Inputs) {
  HostTensor a = make_host_tensor("A", KILN_E4M3, {1, 1});
  a.bytes[0] = 0x01;  // 2^-9
  HostTensor b = tensor("B", KILN_E4M3, {1, 1}, {256});
  HostTensor sa = tensor("scale_a", KILN_F32, {1}, {1});
  HostTensor sb = tensor("scale_b", KILN_F32, {1}, {1});
  HostTensor c = tensor("C", KILN_BF16, {1, 1});
  ASSERT_EQ(call("gemm_tn_fp8", {&a, &b, &sa, &sb, &c}), KILN_OK);
  EXPECT_EQ(c.at(0), 0.5);
}

// Two 128-wide K blocks with their own scales; B's two 128-row blocks with theirs.
TEST(GemmTnFp8BlockscaledReference, ScalesEachBlockProduct) {
  const int64_t M = 2, N = 130, K = 200;  // a ragged second block along K and along N
  HostTensor a = tensor("A", KILN_E4M3, {M, K});
  HostTensor b = tensor("B", KILN_E4M3, {N, K});
  for (int64_t k = 0; k < K; ++k) {
    encode_element(KILN_E4M3, a.bytes.data(), 0 * K + k, 1);
    encode_element(KILN_E4M3, a.bytes.data(), 1 * K + k, k < 128 ? 2 : 0.5);
    for (int64_t n = 0; n < N; ++n)
      encode_element(KILN_E4M3, b.bytes.data(), n * K + k, n == 129 ? 4 : 1);
  }
  HostTensor sa = tensor("scale_a", KILN_F32, {M, 2}, {0.5, 2, 1, 0.25});
  HostTensor sb = tensor("scale_b", KILN_F32, {2, 2}, {1, 0.5, 0.25, 4});
  HostTensor c = tensor("C", KILN_BF16, {M, N});
  ASSERT_EQ(call("gemm_tn_fp8_blockscaled", {&a, &b, &sa, &sb, &c}), KILN_OK);
  // Row 0, column 0: 128*1*(0.5*1) + 72*1*(2*0.5) = 64 + 72.
  EXPECT_EQ(c.at(0 * N + 0), 136);
  // Row 1, column 129 (B block 1): 128*2*4*(1*0.25) + 72*0.5*4*(0.25*4) = 256 + 144.
  EXPECT_EQ(c.at(1 * N + 129), 400);
  // Row 1, column 128 (B block 1, B = 1): 128*2*(0.25) + 72*0.5*(1) = 64 + 36.
  EXPECT_EQ(c.at(1 * N + 128), 100);
}

TEST(GemmTnFp8BlockscaledReference, RejectsScalesOfTheWrongShape) {
  HostTensor a = tensor("A", KILN_E4M3, {2, 129});
  HostTensor b = tensor("B", KILN_E4M3, {3, 129});
  HostTensor sa = tensor("scale_a", KILN_F32, {2, 2});
  HostTensor sb = tensor("scale_b", KILN_F32, {1, 2});
  HostTensor sa_short = tensor("scale_a", KILN_F32, {2, 1});
  HostTensor sb_flat = tensor("scale_b", KILN_F32, {2});
  HostTensor c = tensor("C", KILN_BF16, {2, 3});
  EXPECT_EQ(call("gemm_tn_fp8_blockscaled", {&a, &b, &sa, &sb, &c}), KILN_OK);
  EXPECT_EQ(call("gemm_tn_fp8_blockscaled", {&a, &b, &sa_short, &sb, &c}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("gemm_tn_fp8_blockscaled", {&a, &b, &sa, &sb_flat, &c}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("gemm_tn_fp8_blockscaled", {&a, &b, &c}), KILN_ERR_BAD_ARGUMENT);
}

TEST(GemmTnFp8Reference, RejectsBadArguments) {
  HostTensor a = tensor("A", KILN_E4M3, {1, 2});
  HostTensor b = tensor("B", KILN_E4M3, {1, 2});
  HostTensor sa = tensor("scale_a", KILN_F32, {1}, {1});
  HostTensor sb = tensor("scale_b", KILN_F32, {1}, {1});
  HostTensor c = tensor("C", KILN_BF16, {1, 1});
  HostTensor c_f16 = tensor("C", KILN_F16, {1, 1});
  HostTensor s2 = tensor("scale_b", KILN_F32, {2});
  HostTensor a_f16 = tensor("A", KILN_F16, {1, 2});
  EXPECT_EQ(call("gemm_tn_fp8", {&a, &b, &sa, &sb, &c}), KILN_OK);
  EXPECT_EQ(call("gemm_tn_fp8", {&a, &b, &c}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("gemm_tn_fp8", {&a, &b, &sa, &sb, &c_f16}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("gemm_tn_fp8", {&a, &b, &sa, &s2, &c}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("gemm_tn_fp8", {&a_f16, &b, &sa, &sb, &c}), KILN_ERR_BAD_ARGUMENT);
}

TEST(GroupedGemmTnReference, MultipliesEachGroupByItsB) {
  HostTensor a = tensor("A", KILN_F16, {3, 1}, {1, 2, 3});
  HostTensor b = tensor("B", KILN_F16, {2, 1, 1}, {10, 100});
  HostTensor offsets = tensor("offsets", KILN_I32, {3}, {0, 1, 3});
  HostTensor c = tensor("C", KILN_F16, {3, 1});
  ASSERT_EQ(call("grouped_gemm_tn", {&a, &b, &offsets, &c}), KILN_OK);
  EXPECT_EQ(values(c), (V{10, 200, 300}));
}

TEST(GroupedGemmTnReference, SkipsEmptyGroups) {
  HostTensor a = tensor("A", KILN_BF16, {3, 1}, {1, 2, 3});
  HostTensor b = tensor("B", KILN_BF16, {3, 1, 1}, {10, 100, 1000});
  HostTensor offsets = tensor("offsets", KILN_I32, {4}, {0, 0, 3, 3});
  HostTensor c = tensor("C", KILN_BF16, {3, 1});
  ASSERT_EQ(call("grouped_gemm_tn", {&a, &b, &offsets, &c}), KILN_OK);
  EXPECT_EQ(values(c), (V{100, 200, 300}));
  HostTensor sampled = filled("C", KILN_BF16, {3, 1}, -1);
  ASSERT_EQ(call_rows("grouped_gemm_tn", {&a, &b, &offsets, &sampled}, {1}), KILN_OK);
  EXPECT_EQ(values(sampled), (V{-1, 200, -1}));
}

TEST(GroupedGemmTnReference, RejectsBadOffsets) {
  HostTensor a = tensor("A", KILN_F16, {3, 1});
  HostTensor b = tensor("B", KILN_F16, {2, 1, 1});
  HostTensor c = tensor("C", KILN_F16, {3, 1});
  for (const V& bad : {V{1, 2, 3}, V{0, 2, 1}, V{0, 1, 2}, V{0, 4, 3}}) {
    HostTensor offsets = make_host_tensor("offsets", KILN_I32, {3});
    for (int i = 0; i < 3; ++i)
      encode_element(KILN_I32, offsets.bytes.data(), i, bad[static_cast<size_t>(i)]);
    EXPECT_EQ(call("grouped_gemm_tn", {&a, &b, &offsets, &c}), KILN_ERR_BAD_ARGUMENT)
        << bad[0] << " " << bad[1] << " " << bad[2];
  }
  HostTensor short_offsets = tensor("offsets", KILN_I32, {2}, {0, 3});
  EXPECT_EQ(call("grouped_gemm_tn", {&a, &b, &short_offsets, &c}), KILN_ERR_BAD_ARGUMENT);
  HostTensor b_bf16 = tensor("B", KILN_BF16, {2, 1, 1});
  HostTensor offsets = tensor("offsets", KILN_I32, {3}, {0, 1, 3});
  EXPECT_EQ(call("grouped_gemm_tn", {&a, &b_bf16, &offsets, &c}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("grouped_gemm_tn", {&a, &b, &offsets, &c}), KILN_OK);
}

TEST(GemmTnInt8Reference, ComputesTheExactIntegerProduct) {
  // A[2,3] · B[2,3]ᵀ with the int8 extremes: 3 · (-128)·(-128) = 49152, no rounding anywhere.
  HostTensor a = tensor("A", KILN_I8, {2, 3}, {-128, -128, -128, 127, -1, 0});
  HostTensor b = tensor("B", KILN_I8, {2, 3}, {-128, -128, -128, 1, 2, 3});
  HostTensor c = tensor("C", KILN_I32, {2, 2});
  ASSERT_EQ(call("gemm_tn_int8", {&a, &b, &c}), KILN_OK);
  EXPECT_EQ(values(c), (V{49152, -768, -16128, 125}));
}

TEST(GemmTnInt8Reference, WrapsLikeInt32WhenTheSumOverflows) {
  // 2^17 products of (-128)·(-128) = 2^31, one past INT32_MAX: it wraps to -2^31.
  const int64_t K = int64_t{1} << 17;
  HostTensor a = filled("A", KILN_I8, {1, K}, -128);
  HostTensor b = filled("B", KILN_I8, {1, K}, -128);
  HostTensor c = tensor("C", KILN_I32, {1, 1});
  ASSERT_EQ(call("gemm_tn_int8", {&a, &b, &c}), KILN_OK);
  EXPECT_EQ(c.at(0), -std::ldexp(1, 31));
}

TEST(GemmTnInt8Reference, RowsAndSignatureChecks) {
  HostTensor a = tensor("A", KILN_I8, {3, 1}, {1, 2, 3});
  HostTensor b = tensor("B", KILN_I8, {1, 1}, {-5});
  HostTensor sampled = filled("C", KILN_I32, {3, 1}, 7);
  ASSERT_EQ(call_rows("gemm_tn_int8", {&a, &b, &sampled}, {2}), KILN_OK);
  EXPECT_EQ(values(sampled), (V{7, 7, -15}));
  HostTensor c_f32 = tensor("C", KILN_F32, {3, 1});
  HostTensor a_u8 = tensor("A", KILN_U8, {3, 1});
  EXPECT_EQ(call("gemm_tn_int8", {&a, &b, &c_f32}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("gemm_tn_int8", {&a_u8, &b, &sampled}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("gemm_tn_int8", {&a, &b}), KILN_ERR_BAD_ARGUMENT);
}

TEST(GroupedGemmMaskedReference, MultipliesTheValidRowsAndZeroesTheRest) {
  // G = 2 groups of M = 3 rows, K = N = 1; group 0 counts 2 rows, group 1 none.
  HostTensor a = tensor("A", KILN_BF16, {2, 3, 1}, {1, 2, 3, 4, 5, 6});
  HostTensor b = tensor("B", KILN_BF16, {2, 1, 1}, {10, 100});
  HostTensor masked_m = tensor("masked_m", KILN_I32, {2}, {2, 0});
  HostTensor c = filled("C", KILN_BF16, {2, 3, 1}, -1);
  ASSERT_EQ(call("grouped_gemm_masked", {&a, &b, &masked_m, &c}), KILN_OK);
  EXPECT_EQ(values(c), (V{10, 20, 0, 0, 0, 0}));
  HostTensor full = tensor("masked_m", KILN_I32, {2}, {0, 3});
  ASSERT_EQ(call("grouped_gemm_masked", {&a, &b, &full, &c}), KILN_OK);
  EXPECT_EQ(values(c), (V{0, 0, 0, 400, 500, 600}));
}

TEST(GroupedGemmMaskedReference, RowsAreFlattenedOverGroupsAndRows) {
  HostTensor a = tensor("A", KILN_F16, {2, 2, 2}, {1, 1, 2, 2, 3, 3, 4, 4});
  HostTensor b = tensor("B", KILN_F16, {2, 1, 2}, {1, 2, 10, 20});
  HostTensor masked_m = tensor("masked_m", KILN_I32, {2}, {1, 2});
  HostTensor sampled = filled("C", KILN_F16, {2, 2, 1}, -1);
  // Row 1 is group 0's masked-out row (zeros), row 3 group 1's second row.
  ASSERT_EQ(call_rows("grouped_gemm_masked", {&a, &b, &masked_m, &sampled}, {1, 3}), KILN_OK);
  EXPECT_EQ(values(sampled), (V{-1, 0, -1, 120}));
  EXPECT_EQ(call_rows("grouped_gemm_masked", {&a, &b, &masked_m, &sampled}, {4}),
            KILN_ERR_BAD_ARGUMENT);
}

TEST(GroupedGemmMaskedReference, RejectsCountsOutsideTheCapacityAndBadShapes) {
  HostTensor a = tensor("A", KILN_BF16, {2, 3, 1});
  HostTensor b = tensor("B", KILN_BF16, {2, 1, 1});
  HostTensor c = tensor("C", KILN_BF16, {2, 3, 1});
  for (const V& bad : {V{-1, 0}, V{0, 4}}) {
    HostTensor masked_m = tensor("masked_m", KILN_I32, {2});
    for (int g = 0; g < 2; ++g)
      encode_element(KILN_I32, masked_m.bytes.data(), g, bad[static_cast<size_t>(g)]);
    EXPECT_EQ(call("grouped_gemm_masked", {&a, &b, &masked_m, &c}), KILN_ERR_BAD_ARGUMENT)
        << bad[0] << " " << bad[1];
  }
  HostTensor masked_m = tensor("masked_m", KILN_I32, {2}, {3, 0});
  HostTensor short_m = tensor("masked_m", KILN_I32, {1}, {3});
  HostTensor c_wide = tensor("C", KILN_BF16, {2, 3, 2});
  HostTensor b_f16 = tensor("B", KILN_F16, {2, 1, 1});
  EXPECT_EQ(call("grouped_gemm_masked", {&a, &b, &short_m, &c}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("grouped_gemm_masked", {&a, &b, &masked_m, &c_wide}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("grouped_gemm_masked", {&a, &b_f16, &masked_m, &c}), KILN_ERR_BAD_ARGUMENT);
  EXPECT_EQ(call("grouped_gemm_masked", {&a, &b, &masked_m, &c}), KILN_OK);
}

}  // namespace
}  // namespace kiln::zoo
