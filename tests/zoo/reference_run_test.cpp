// Checks running references on test cases (tests/zoo/support/reference_run.cpp): a
// sampled run agrees with the full one on the rows it computes.
#include "reference_run.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "output_compare.h"

namespace kiln::zoo {
namespace {

ZooMeta gemm_meta() {
  ZooMeta meta;
  meta.id = "gemm";
  meta.op = "gemm_tn";
  meta.inputs = {{"A", KILN_F16, {"M", "K"}}, {"B", KILN_F16, {"N", "K"}}};
  meta.outputs = {{"C", KILN_F16, {"M", "N"}}};
  meta.shapes = {{{"M", 96}, {"N", 40}, {"K", 24}}};
  return meta;
}

TEST(ReferenceRun, ComputesEveryElementWithinBudget) {
  const ZooMeta meta = gemm_meta();
  CaseResult made = make_zoo_case(meta, 0, 1);
  ASSERT_TRUE(made.error.empty());
  const ReferenceRun run = run_reference(meta.op, made.test_case, 1);
  ASSERT_EQ(run.status, KILN_OK) << run.error;
  EXPECT_FALSE(run.rows.has_value());
  EXPECT_EQ(run.coverage, "all elements");
}

TEST(ReferenceRun, SamplesRowsOverBudgetAndAgreesWithTheFullRun) {
  const ZooMeta meta = gemm_meta();
  CaseResult made = make_zoo_case(meta, 0, 1);
  const ReferenceRun full = run_reference(meta.op, made.test_case, 1);
  const ReferenceRun sampled =
      run_reference(meta.op, made.test_case, 1, /*budget=*/1000, /*sample_rows=*/8);
  ASSERT_EQ(sampled.status, KILN_OK) << sampled.error;
  ASSERT_TRUE(sampled.rows.has_value());
  EXPECT_EQ(sampled.rows->size(), 8u);
  EXPECT_EQ(sampled.rows->front(), 0);  // the edges are always in the sample
  EXPECT_EQ(sampled.rows->back(), 95);
  EXPECT_EQ(sampled.row_length, 40);
  const Comparison c = compare_outputs(full.expected[0], sampled.expected[0], 0, 0, sampled.rows,
                                       sampled.row_length);
  EXPECT_TRUE(c.passed()) << c.describe(0, 0);
  EXPECT_EQ(c.checked, 8 * 40);
}

TEST(ReferenceRun, SamplesAttentionRowsAcrossHeads) {
  ZooMeta meta;
  meta.id = "attn";
  meta.op = "attention_fwd";
  for (const char* name : {"Q", "K", "V"})
    meta.inputs.push_back({name, KILN_BF16, {"B", "H", "S", "D"}});
  meta.outputs = {{"O", KILN_BF16, {"B", "H", "S", "D"}}};
  meta.scalars = {{"causal", KILN_I64, 1, 0}, {"scale", KILN_F64, 0, 0.25}};
  meta.shapes = {{{"B", 2}, {"H", 2}, {"S", 32}, {"D", 16}}};
  CaseResult made = make_zoo_case(meta, 0, 3);
  ASSERT_TRUE(made.error.empty()) << made.error;
  const ReferenceRun full = run_reference(meta.op, made.test_case, 3);
  const ReferenceRun sampled = run_reference(meta.op, made.test_case, 3, 100, 10);
  ASSERT_EQ(sampled.status, KILN_OK) << sampled.error;
  ASSERT_TRUE(sampled.rows.has_value());
  EXPECT_EQ(sampled.rows->back(), 2 * 2 * 32 - 1);
  EXPECT_TRUE(
      compare_outputs(full.expected[0], sampled.expected[0], 0, 0, sampled.rows, 16).passed());
}

TEST(ReferenceRun, ExplainsASignatureTheReferenceRejects) {
  ZooMeta meta = gemm_meta();
  meta.outputs = {{"C", KILN_F16, {"N", "M"}}};  // transposed output: wrong for gemm_tn
  CaseResult made = make_zoo_case(meta, 0, 1);
  ASSERT_TRUE(made.error.empty());
  const ReferenceRun run = run_reference(meta.op, made.test_case, 1);
  EXPECT_EQ(run.status, KILN_ERR_BAD_ARGUMENT);
  EXPECT_NE(run.error.find("meta.json"), std::string::npos) << run.error;
}

TEST(ReferenceRun, ChecksOnlyTheCacheRowsAKvAppendWritesAndWantsTheOthersUntouched) {
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
  meta.shapes = {{{"T", 6}, {"S", 50}, {"HK", 2}, {"D", 16}}};
  CaseResult made = make_zoo_case(meta, 0, 4);
  ASSERT_TRUE(made.error.empty()) << made.error;
  const ReferenceRun run = run_reference(meta.op, made.test_case, 4);
  ASSERT_EQ(run.status, KILN_OK) << run.error;
  ASSERT_TRUE(run.rows.has_value());
  EXPECT_TRUE(run.others_untouched);
  EXPECT_EQ(run.row_length, 2 * 16);
  std::vector<int64_t> positions;
  for (int64_t t = 0; t < 6; ++t)
    positions.push_back(static_cast<int64_t>(made.test_case.inputs[2].at(t)));
  std::sort(positions.begin(), positions.end());
  EXPECT_EQ(*run.rows, positions);
  EXPECT_NE(run.coverage.find("6 of 50 rows"), std::string::npos) << run.coverage;
}

TEST(ReferenceRun, SampledRowsDoNotAskTheOthersToBeUntouched) {
  const ZooMeta meta = gemm_meta();
  CaseResult made = make_zoo_case(meta, 0, 1);
  const ReferenceRun sampled = run_reference(meta.op, made.test_case, 1, 1000, 8);
  ASSERT_TRUE(sampled.rows.has_value());
  EXPECT_FALSE(sampled.others_untouched);
}

}  // namespace
}  // namespace kiln::zoo
