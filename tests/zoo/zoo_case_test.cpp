// Checks test-case generation (tests/zoo/support/zoo_case.cpp): shapes from the meta,
// inputs inside the range and reproducible, group offsets, FP8 inputs and scales.
#include "zoo_case.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "kiln/zoo/numeric.h"

namespace kiln::zoo {
namespace {

ZooMeta gemm_meta(kiln_dtype dtype) {
  ZooMeta meta;
  meta.id = "gemm_test";
  meta.op = "gemm_tn";
  meta.inputs = {{"A", dtype, {"M", "K"}}, {"B", dtype, {"N", "K"}}};
  meta.outputs = {{"C", dtype, {"M", "N"}}};
  meta.shapes = {{{"M", 64}, {"N", 48}, {"K", 32}}};
  meta.range_low = -1;
  meta.range_high = 1;
  return meta;
}

TEST(ZooCase, BuildsTensorsOfTheDeclaredShapesWithinTheRange) {
  const ZooMeta meta = gemm_meta(KILN_BF16);
  CaseResult made = make_zoo_case(meta, 0, 1);
  ASSERT_TRUE(made.error.empty()) << made.error;
  const ZooCase& c = made.test_case;
  ASSERT_EQ(c.inputs.size(), 2u);
  ASSERT_EQ(c.outputs.size(), 1u);
  EXPECT_EQ(c.inputs[0].shape, (std::vector<int64_t>{64, 32}));
  EXPECT_EQ(c.inputs[1].shape, (std::vector<int64_t>{48, 32}));
  EXPECT_EQ(c.outputs[0].shape, (std::vector<int64_t>{64, 48}));
  std::set<double> distinct;
  for (int64_t i = 0; i < c.inputs[0].element_count(); ++i) {
    const double v = c.inputs[0].at(i);
    ASSERT_GE(v, -1);
    ASSERT_LE(v, 1);
    distinct.insert(v);
  }
  EXPECT_GT(distinct.size(), 500u);  // not a constant or a handful of values
}

TEST(ZooCase, SameSeedSameInputsOtherSeedOtherInputs) {
  const ZooMeta meta = gemm_meta(KILN_F16);
  const auto a = make_zoo_case(meta, 0, 7).test_case.inputs[0].bytes;
  const auto b = make_zoo_case(meta, 0, 7).test_case.inputs[0].bytes;
  const auto c = make_zoo_case(meta, 0, 8).test_case.inputs[0].bytes;
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(case_seed("x", 0, 0), case_seed("x", 1, 0));
  EXPECT_NE(case_seed("x", 0, 0), case_seed("y", 0, 0));
}

TEST(ZooCase, ReportsShapeExpressionsThatDoNotEvaluate) {
  ZooMeta meta = gemm_meta(KILN_F16);
  meta.shapes = {{{"M", 64}, {"N", 48}}};  // K missing
  const CaseResult made = make_zoo_case(meta, 0, 1);
  EXPECT_NE(made.error.find("K"), std::string::npos) << made.error;
}

TEST(ZooCase, GroupOffsetsPartitionMWithAnEmptyGroup) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    const auto offsets = random_group_offsets(1000, 6, 8, seed);
    ASSERT_EQ(offsets.size(), 7u);
    EXPECT_EQ(offsets.front(), 0);
    EXPECT_EQ(offsets.back(), 1000);
    bool empty = false;
    for (size_t g = 0; g + 1 < offsets.size(); ++g) {
      const int size = offsets[g + 1] - offsets[g];
      ASSERT_GE(size, 0);
      EXPECT_EQ(size % 8, 0);
      empty = empty || size == 0;
    }
    EXPECT_TRUE(empty) << "seed " << seed;
  }
  bool odd = false;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const auto offsets = random_group_offsets(999, 4, 1, seed);
    EXPECT_EQ(offsets.back(), 999);
    for (size_t g = 0; g + 1 < offsets.size(); ++g)
      odd = odd || (offsets[g + 1] - offsets[g]) % 8 != 0;
  }
  EXPECT_TRUE(odd) << "with multiple 1, group sizes should not all be multiples of 8";
  EXPECT_EQ(random_group_offsets(16, 1, 8, 3), (std::vector<int32_t>{0, 16}));
}

TEST(ZooCase, GroupedGemmOffsetsFollowTheMeta) {
  ZooMeta meta;
  meta.id = "grouped";
  meta.op = "grouped_gemm_tn";
  meta.inputs = {{"A", KILN_F16, {"M", "K"}},
                 {"B", KILN_F16, {"G", "N", "K"}},
                 {"offsets", KILN_I32, {"G+1"}}};
  meta.outputs = {{"C", KILN_F16, {"M", "N"}}};
  meta.shapes = {{{"M", 96}, {"N", 16}, {"K", 16}, {"G", 4}}};
  meta.group_sizes_multiple_of = 32;
  const CaseResult made = make_zoo_case(meta, 0, 5);
  ASSERT_TRUE(made.error.empty()) << made.error;
  const HostTensor& offsets = made.test_case.inputs[2];
  ASSERT_EQ(offsets.element_count(), 5);
  EXPECT_EQ(offsets.at(0), 0);
  EXPECT_EQ(offsets.at(4), 96);
  for (int g = 0; g < 4; ++g) EXPECT_EQ(std::fmod(offsets.at(g + 1) - offsets.at(g), 32), 0);
  meta.shapes = {{{"M", 100}, {"N", 16}, {"K", 16}, {"G", 4}}};
  EXPECT_NE(make_zoo_case(meta, 0, 5).error.find("multiple"), std::string::npos);
}

TEST(ZooCase, MaskedCountsLieInTheCapacityWithAnEmptyAndAFullGroup) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const std::vector<int32_t> counts = random_masked_counts(5, 100, seed);
    ASSERT_EQ(counts.size(), 5u);
    for (const int32_t count : counts) {
      EXPECT_GE(count, 0);
      EXPECT_LE(count, 100);
    }
    EXPECT_NE(std::find(counts.begin(), counts.end(), 0), counts.end()) << seed;
    EXPECT_NE(std::find(counts.begin(), counts.end(), 100), counts.end()) << seed;
  }
  EXPECT_EQ(random_masked_counts(4, 64, 7), random_masked_counts(4, 64, 7));
  EXPECT_EQ(random_masked_counts(1, 0, 3), (std::vector<int32_t>{0}));
}

TEST(ZooCase, MaskedGemmCountsFollowTheMeta) {
  ZooMeta meta;
  meta.id = "masked";
  meta.op = "grouped_gemm_masked";
  meta.inputs = {{"A", KILN_BF16, {"G", "M", "K"}},
                 {"B", KILN_BF16, {"G", "N", "K"}},
                 {"masked_m", KILN_I32, {"G"}}};
  meta.outputs = {{"C", KILN_BF16, {"G", "M", "N"}}};
  meta.shapes = {{{"G", 6}, {"M", 40}, {"N", 16}, {"K", 16}}};
  const CaseResult made = make_zoo_case(meta, 0, 11);
  ASSERT_TRUE(made.error.empty()) << made.error;
  const HostTensor& masked_m = made.test_case.inputs[2];
  std::vector<int32_t> counts;
  for (int64_t g = 0; g < 6; ++g) counts.push_back(static_cast<int32_t>(masked_m.at(g)));
  EXPECT_EQ(counts, random_masked_counts(6, 40, 11 ^ (3 * 0x2545f4914f6cdd1dull)));
}

TEST(ZooCase, Fp8GemmGetsE4m3ValuesInRangeAndFixedScales) {
  ZooMeta meta;
  meta.id = "fp8";
  meta.op = "gemm_tn_fp8";
  meta.inputs = {{"A", KILN_E4M3, {"M", "K"}},
                 {"B", KILN_E4M3, {"N", "K"}},
                 {"scale_a", KILN_F32, {"1"}},
                 {"scale_b", KILN_F32, {"1"}}};
  meta.outputs = {{"C", KILN_BF16, {"M", "N"}}};
  meta.shapes = {{{"M", 32}, {"N", 32}, {"K", 64}}};
  meta.range_low = -2;
  meta.range_high = 2;
  const CaseResult made = make_zoo_case(meta, 0, 9);
  ASSERT_TRUE(made.error.empty()) << made.error;
  const ZooCase& c = made.test_case;
  std::set<int> exponents;
  for (int64_t i = 0; i < c.inputs[0].element_count(); ++i) {
    const double v = c.inputs[0].at(i);
    ASSERT_FALSE(std::isnan(v));
    ASSERT_LE(std::fabs(v), 2);
    exponents.insert((c.inputs[0].bytes[static_cast<size_t>(i)] >> 3) & 0xf);
  }
  EXPECT_GT(exponents.size(), 6u);  // small, subnormal and large magnitudes all appear
  EXPECT_EQ(c.inputs[2].at(0), 0.5);
  EXPECT_EQ(c.inputs[3].at(0), 0.25);
}

TEST(ZooCase, TopkInputsHoldTies) {
  ZooMeta meta;
  meta.id = "topk";
  meta.op = "topk";
  meta.inputs = {{"x", KILN_F32, {"R", "C"}}};
  meta.outputs = {{"values", KILN_F32, {"R", "K"}}, {"indices", KILN_I32, {"R", "K"}}};
  meta.shapes = {{{"R", 2}, {"C", 1024}, {"K", 8}}};
  const CaseResult made = make_zoo_case(meta, 0, 2);
  ASSERT_TRUE(made.error.empty()) << made.error;
  std::set<double> distinct;
  for (int64_t i = 0; i < 1024; ++i) distinct.insert(made.test_case.inputs[0].at(i));
  EXPECT_LE(distinct.size(), 257u);
}

TEST(ZooCase, MoePermuteIndicesAreDistinctExpertsPerTokenAndSkewed) {
  ZooMeta meta;
  meta.id = "moe";
  meta.op = "moe_permute";
  meta.inputs = {{"x", KILN_BF16, {"T", "H"}}, {"indices", KILN_I32, {"T", "K"}}};
  meta.outputs = {{"x_sorted", KILN_BF16, {"T*K", "H"}},
                  {"expert_offsets", KILN_I32, {"E+1"}},
                  {"dest_rows", KILN_I32, {"T", "K"}}};
  meta.shapes = {{{"T", 512}, {"H", 8}, {"K", 8}, {"E", 16}}};
  const CaseResult made = make_zoo_case(meta, 0, 5);
  ASSERT_TRUE(made.error.empty()) << made.error;
  const HostTensor& indices = made.test_case.inputs[1];
  std::vector<int64_t> per_expert(16, 0);
  for (int64_t t = 0; t < 512; ++t) {
    std::set<double> row;
    for (int64_t k = 0; k < 8; ++k) {
      const double e = indices.at(t * 8 + k);
      ASSERT_GE(e, 0);
      ASSERT_LT(e, 16);
      row.insert(e);
      ++per_expert[static_cast<size_t>(e)];
    }
    EXPECT_EQ(row.size(), 8u) << "token " << t << " names an expert twice";
  }
  EXPECT_GT(per_expert[0], per_expert[15]);  // low ids are more popular
  meta.shapes = {{{"T", 4}, {"H", 8}, {"K", 8}, {"E", 4}}};
  EXPECT_FALSE(make_zoo_case(meta, 0, 5).error.empty());  // K > E: no K distinct experts
}

TEST(ZooCase, MoeUnpermuteDestRowsArePermutations) {
  ZooMeta meta;
  meta.id = "moe";
  meta.op = "moe_unpermute";
  meta.inputs = {{"y", KILN_BF16, {"T*K", "H"}},
                 {"dest_rows", KILN_I32, {"T", "K"}},
                 {"weights", KILN_F32, {"T", "K"}}};
  meta.outputs = {{"out", KILN_BF16, {"T", "H"}}};
  meta.shapes = {{{"T", 100}, {"H", 8}, {"K", 3}}};
  const CaseResult made = make_zoo_case(meta, 0, 6);
  ASSERT_TRUE(made.error.empty()) << made.error;
  std::set<double> rows;
  for (int64_t i = 0; i < 300; ++i) rows.insert(made.test_case.inputs[1].at(i));
  EXPECT_EQ(rows.size(), 300u);
  EXPECT_EQ(*rows.begin(), 0);
  EXPECT_EQ(*rows.rbegin(), 299);
}

ZooMeta kv_cache_meta(int64_t T, int64_t S) {
  ZooMeta meta;
  meta.id = "kv";
  meta.op = "kv_cache_append_rope";
  meta.inputs = {{"k_new", KILN_BF16, {"T", "HK", "D"}},
                 {"v_new", KILN_BF16, {"T", "HK", "D"}},
                 {"positions", KILN_I32, {"T"}},
                 {"cos", KILN_F32, {"S", "D/2"}},
                 {"sin", KILN_F32, {"S", "D/2"}}};
  meta.outputs = {{"k_cache", KILN_BF16, {"S", "HK", "D"}},
                  {"v_cache", KILN_BF16, {"S", "HK", "D"}}};
  meta.shapes = {{{"T", T}, {"S", S}, {"HK", 1}, {"D", 16}}};
  return meta;
}

TEST(ZooCase, KvCachePositionsAreDistinctRowsOfTheCacheInRandomOrder) {
  for (const auto& [T, S] : {std::pair<int64_t, int64_t>{60, 60}, {40, 100000}}) {
    const CaseResult made = make_zoo_case(kv_cache_meta(T, S), 0, 9);
    ASSERT_TRUE(made.error.empty()) << made.error;
    const HostTensor& positions = made.test_case.inputs[2];
    std::set<double> rows;
    bool ascending = true;
    for (int64_t t = 0; t < T; ++t) {
      const double p = positions.at(t);
      EXPECT_GE(p, 0);
      EXPECT_LT(p, static_cast<double>(S));
      EXPECT_EQ(p, std::floor(p));
      if (t > 0 && p < positions.at(t - 1)) ascending = false;
      rows.insert(p);
    }
    EXPECT_EQ(static_cast<int64_t>(rows.size()), T);
    EXPECT_FALSE(ascending);
  }
  const CaseResult too_many = make_zoo_case(kv_cache_meta(5, 4), 0, 9);
  EXPECT_NE(too_many.error.find("at least T"), std::string::npos) << too_many.error;
}

TEST(ZooCase, IntegerInputsAreWholeNumbersInRange) {
  ZooMeta meta;
  meta.id = "scan";
  meta.op = "scan";
  meta.inputs = {{"x", KILN_I32, {"N"}}};
  meta.outputs = {{"y", KILN_I32, {"N"}}};
  meta.shapes = {{{"N", 4096}}};
  meta.range_low = -3.5;
  meta.range_high = 3.5;
  const CaseResult made = make_zoo_case(meta, 0, 4);
  ASSERT_TRUE(made.error.empty()) << made.error;
  std::set<double> seen;
  for (int64_t i = 0; i < 4096; ++i) seen.insert(made.test_case.inputs[0].at(i));
  EXPECT_EQ(seen, (std::set<double>{-3, -2, -1, 0, 1, 2, 3}));
}

TEST(ZooCase, ScalarsComeFromTheMeta) {
  ZooMeta meta;
  meta.id = "attn";
  meta.op = "attention_fwd";
  for (const char* name : {"Q", "K", "V"})
    meta.inputs.push_back({name, KILN_F16, {"B", "H", "S", "D"}});
  meta.outputs = {{"O", KILN_F16, {"B", "H", "S", "D"}}};
  meta.scalars = {{"causal", KILN_I64, 1, 0}, {"scale", KILN_F64, 0, 0.125}};
  meta.shapes = {{{"B", 1}, {"H", 2}, {"S", 8}, {"D", 16}}};
  const CaseResult made = make_zoo_case(meta, 0, 4);
  ASSERT_TRUE(made.error.empty()) << made.error;
  ASSERT_EQ(made.test_case.scalars.size(), 2u);
  EXPECT_STREQ(made.test_case.scalars[0].name, "causal");
  EXPECT_EQ(made.test_case.scalars[0].value.i, 1);
  EXPECT_EQ(made.test_case.scalars[1].value.f, 0.125);
}

}  // namespace
}  // namespace kiln::zoo
