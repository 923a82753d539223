// reference_check.h: row sampling and the CPU-reference comparison, with a toy
// reference and with the real fp16_gemm reference built as the harness builds it.
#include "kiln/tasks/reference_check.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "kiln/tasks/numeric_codec.h"
#include "kiln/tasks/poison_pattern.h"
#include "reference_fixture.h"

namespace kiln::tasks {
namespace {

WorkloadLayout gemm_layout(int64_t M, int64_t N, int64_t K) {
  auto task = load_task(testing::bundled_tasks_dir() / "fp16_gemm");
  EXPECT_TRUE(task.ok());
  Workload w{"w", {{"M", M}, {"N", N}, {"K", K}}};
  return *layout_workload(*task, w);
}

TEST(RowSampler, SlicesTheTensorsThatShareTheOutputRows) {
  const WorkloadLayout layout = gemm_layout(64, 32, 16);
  EXPECT_EQ(RowSampler::sliced_tensors(layout), (std::vector<bool>{true, false, true}));  // A, B, C
}

TEST(RowSampler, ChecksSmallWorkloadsWhole) {
  const RowPlan plan = RowSampler::plan(gemm_layout(64, 64, 64), ReferenceBudget{}, 1, {});
  EXPECT_TRUE(plan.full);
}

TEST(RowSampler, SamplesLargeWorkloadsWithinBudget) {
  const WorkloadLayout layout = gemm_layout(8192, 8192, 8192);
  const RowPlan plan = RowSampler::plan(layout, ReferenceBudget{}, 7, {4444, 99999});
  ASSERT_FALSE(plan.full);
  EXPECT_EQ(plan.rows.front(), 0);
  EXPECT_EQ(plan.rows.back(), 8191);
  EXPECT_NE(std::find(plan.rows.begin(), plan.rows.end(), 4444),
            plan.rows.end());  // required rows kept
  const double per_row = layout.flops / 8192;
  EXPECT_LE(static_cast<double>(plan.rows.size()) * per_row,
            2 * ReferenceBudget{}.sampled_check_flops);
  EXPECT_TRUE(std::is_sorted(plan.rows.begin(), plan.rows.end()));
  // Different seeds sample different rows.
  EXPECT_NE(RowSampler::plan(layout, ReferenceBudget{}, 8, {}).rows, plan.rows);
  EXPECT_NE(plan.describe(8192).find("of 8192 rows"), std::string::npos);
}

// A toy reference: C[i][j] = sum_k A[i][k] (B ignored), f16.
int row_sum_reference(const kiln_tensor* t, int, const kiln_scalar*, int) {
  const auto* a = static_cast<const uint16_t*>(t[0].data);
  auto* c = static_cast<uint16_t*>(t[2].data);
  for (int64_t i = 0; i < t[0].shape[0]; ++i) {
    double sum = 0;
    for (int64_t k = 0; k < t[0].shape[1]; ++k)
      sum += decode(KILN_F16, a[i * t[0].strides[0] + k * t[0].strides[1]]);
    for (int64_t j = 0; j < t[2].shape[1]; ++j)
      c[i * t[2].strides[0] + j] = static_cast<uint16_t>(encode(KILN_F16, sum));
  }
  return KILN_OK;
}

HostTensors toy_tensors(const WorkloadLayout& layout) {
  HostTensors host(3);
  for (size_t t = 0; t < 3; ++t) host[t].resize(static_cast<size_t>(layout.tensors[t].bytes()));
  auto* a = reinterpret_cast<uint16_t*>(host[0].data());
  const int64_t M = layout.tensors[0].shape[0], K = layout.tensors[0].shape[1],
                N = layout.tensors[1].shape[0];
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t k = 0; k < K; ++k)
      a[i * K + k] = static_cast<uint16_t>(encode(KILN_F16, static_cast<double>(i % 7)));
  }
  auto* c = reinterpret_cast<uint16_t*>(host[2].data());
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j)
      c[i * N + j] = static_cast<uint16_t>(encode(KILN_F16, static_cast<double>((i % 7) * K)));
  }
  return host;
}

TEST(ReferenceCheck, GathersSampledRowsAndComparesThem) {
  const WorkloadLayout layout = gemm_layout(100, 4, 8);
  HostTensors host = toy_tensors(layout);
  RowPlan plan;
  plan.full = false;
  plan.rows = {0, 13, 99};
  const ReferenceCheck check(row_sum_reference, Tolerance{0.01, 0.0, 0});
  auto stats = check.check(layout, host, plan, {PoisonPattern::bits(KILN_F16, 0)});
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  EXPECT_EQ(stats->checked, 12);
  EXPECT_EQ(stats->mismatches, 0);
  // Break row 13 and one row the plan does not sample.
  auto* c = reinterpret_cast<uint16_t*>(host[2].data());
  c[13 * 4 + 2] = static_cast<uint16_t>(encode(KILN_F16, -1.0));
  c[50 * 4 + 2] = static_cast<uint16_t>(encode(KILN_F16, -1.0));
  stats = check.check(layout, host, plan, {0});
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->mismatches, 1);
  EXPECT_EQ(stats->first_mismatches[0].index, (std::vector<int64_t>{13, 2}));
  plan.full = true;
  stats = check.check(layout, host, plan, {0});
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->mismatches, 2);
}

TEST(ReferenceCheck, UsesTheRealGemmReferenceBuiltByTheWorker) {
  testing::TempDir dir;
  const compiler::KernelBuild builder = testing::reference_builder();
  const compiler::BuildRequest request =
      testing::reference_request("fp16_gemm", dir.path() / "reference");
  const compiler::BuildOutcome build = builder.build(request);
  ASSERT_TRUE(build.ok) << build.error << build.log;
  const kiln_reference_fn reference = testing::load_reference(build.library);
  ASSERT_NE(reference, nullptr);

  const WorkloadLayout layout = gemm_layout(40, 24, 32);
  HostTensors host(3);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  for (size_t t = 0; t < 3; ++t) {
    host[t].resize(static_cast<size_t>(layout.tensors[t].bytes()));
    auto* p = reinterpret_cast<uint16_t*>(host[t].data());
    for (int64_t i = 0; i < layout.tensors[t].elements(); ++i)
      p[i] = static_cast<uint16_t>(encode(KILN_F16, u(rng)));
  }
  // A "candidate" output: the exact product computed here in double.
  auto* a = reinterpret_cast<uint16_t*>(host[0].data());
  auto* b = reinterpret_cast<uint16_t*>(host[1].data());
  auto* c = reinterpret_cast<uint16_t*>(host[2].data());
  for (int i = 0; i < 40; ++i) {
    for (int j = 0; j < 24; ++j) {
      double sum = 0;
      for (int k = 0; k < 32; ++k)
        sum += decode(KILN_F16, a[i * 32 + k]) * decode(KILN_F16, b[j * 32 + k]);
      c[i * 24 + j] = static_cast<uint16_t>(encode(KILN_F16, sum));
    }
  }
  const ReferenceCheck check(reference, Tolerance{0.01, 0.002, 0});
  RowPlan sampled;
  sampled.full = false;
  sampled.rows = {0, 7, 39};
  for (const RowPlan& plan : {RowPlan{}, sampled}) {
    auto stats = check.check(layout, host, plan, {PoisonPattern::bits(KILN_F16, 0)});
    ASSERT_TRUE(stats.ok()) << stats.error().message;
    EXPECT_EQ(stats->mismatches, 0);
    EXPECT_EQ(stats->max_abs, 0);  // same rounding of the same exact sum
  }
  // The second build comes from the cache.
  EXPECT_TRUE(builder.build(request).cached);
}

}  // namespace
}  // namespace kiln::tasks

namespace kiln::tasks {
namespace {

TEST(RowSampler, BoundsComparedElementsForMemoryBoundOps) {
  auto task = load_task(testing::bundled_tasks_dir() / "rmsnorm");
  ASSERT_TRUE(task.ok());
  auto big = layout_workload(*task, task->workloads.back());  // 16384 x 16384
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(RowSampler::sliced_tensors(*big), (std::vector<bool>{true, false, true}));  // x, w, y
  const RowPlan plan = RowSampler::plan(*big, ReferenceBudget{}, 3, {});
  ASSERT_FALSE(plan.full);
  EXPECT_LE(static_cast<int64_t>(plan.rows.size()) * 16384,
            2 * ReferenceBudget{}.sampled_check_elements);
  auto small = layout_workload(*task, task->workloads.front());  // 1 x 1024
  ASSERT_TRUE(small.ok());
  EXPECT_TRUE(RowSampler::plan(*small, ReferenceBudget{}, 3, {}).full);
}

}  // namespace
}  // namespace kiln::tasks
