// The group_index input distribution and ignore_rows_where (tasks/FORMAT.md): the loader's
// checks, the one generator (kiln/group_layout.h) and the rows every comparison leaves out.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "bundle_fixture.h"
#include "kiln/group_layout.h"
#include "kiln/tasks/numeric_codec.h"
#include "kiln/tasks/output_comparison.h"
#include "kiln/tasks/poison_pattern.h"
#include "kiln/tasks/reference_check.h"
#include "kiln/tasks/task.h"
#include "kiln/tasks/tensor_layout.h"

namespace kiln::tasks {
namespace {

using testing::BundleCopy;
using testing::bundled_tasks_dir;
using ::testing::HasSubstr;

std::string error_after_edit(const std::function<void(nlohmann::json&)>& edit) {
  BundleCopy bundle("grouped_gemm_fp8");
  auto json = bundle.task_json();
  edit(json);
  bundle.set_task_json(json);
  auto task = load_task(bundle.dir());
  if (task) return "(loaded without error)";
  return task.error().message;
}

struct Layout {
  std::vector<int64_t> begin, rows;
};

Layout layout_of(int64_t groups, int64_t per_group, int64_t align, uint64_t seed, int64_t total) {
  Layout l{std::vector<int64_t>(static_cast<size_t>(groups)),
           std::vector<int64_t>(static_cast<size_t>(groups))};
  EXPECT_EQ(
      kiln_group_layout(groups, per_group, align, 0.25, seed, total, l.begin.data(), l.rows.data()),
      0);
  return l;
}

TEST(GroupIndex, TheBundledTaskDeclaresItsIndexAndIgnoredRows) {
  auto task = load_task(bundled_tasks_dir() / "grouped_gemm_fp8");
  ASSERT_TRUE(task) << task.error().message;
  const TensorSpec& index = task->tensors[4];
  EXPECT_EQ(index.name, "I");
  EXPECT_EQ(index.distribution.kind, "group_index");
  EXPECT_EQ(index.distribution.groups, "G");
  EXPECT_EQ(index.distribution.rows_per_group, "M");
  EXPECT_EQ(index.distribution.align, "128");
  EXPECT_EQ(index.distribution.seed, "S");
  ASSERT_EQ(task->ignore_rows_where.size(), 1u);
  EXPECT_EQ(task->ignore_rows_where[0].output, "D");
  EXPECT_EQ(task->ignore_rows_where[0].index, "I");
  EXPECT_EQ(task->ignore_rows_where[0].equals, -1);
  const auto contract = to_json(*task);
  EXPECT_EQ(contract["input_distribution"]["I"]["kind"], "group_index");
  EXPECT_EQ(contract["ignore_rows_where"][0]["index"], "I");
}

TEST(GroupIndex, TheGeneratorIsDeterministicAlignedAndFits) {
  for (uint64_t seed : {1u, 2u, 3u, 4u, 99u}) {
    for (auto [groups, per_group] : {std::pair<int64_t, int64_t>{4, 8192}, {8, 4096}, {2, 200}}) {
      SCOPED_TRACE(std::to_string(groups) + "x" + std::to_string(per_group));
      const int64_t total = groups * per_group;
      const Layout a = layout_of(groups, per_group, 128, seed, total);
      const Layout b = layout_of(groups, per_group, 128, seed, total);
      EXPECT_EQ(a.begin, b.begin);
      EXPECT_EQ(a.rows, b.rows);
      int64_t end = 0;
      for (int64_t g = 0; g < groups; ++g) {
        EXPECT_EQ(a.begin[g] % 128, 0);
        EXPECT_EQ(a.begin[g], end);  // groups follow each other, each padded to the alignment
        EXPECT_LT(a.rows[g], per_group * 5 / 4 + 1);  // never more than the spread allows
        end += (a.rows[g] + 127) / 128 * 128;
      }
      EXPECT_LE(end, total);
    }
  }
  // A different seed gives a different layout.
  EXPECT_NE(layout_of(4, 8192, 128, 1, 32768).rows, layout_of(4, 8192, 128, 2, 32768).rows);
}

TEST(GroupIndex, LengthsVaryAroundRowsPerGroupWhenTheyFit) {
  // Room for every draw: the lengths come straight from [0.75 M, 1.25 M).
  const Layout l = layout_of(8, 4096, 128, 7, 8 * 4096 * 2);
  int64_t sum = 0;
  for (int64_t rows : l.rows) {
    EXPECT_GE(rows, 4096 * 3 / 4);
    EXPECT_LT(rows, 4096 * 5 / 4);
    sum += rows;
  }
  EXPECT_NE(sum, 8 * 4096);
}

TEST(GroupIndex, RowsOutsideEveryGroupAreMinusOneAndTheTailIsPadding) {
  auto task = load_task(bundled_tasks_dir() / "grouped_gemm_fp8");
  ASSERT_TRUE(task) << task.error().message;
  std::vector<Workload> all = task->workloads;
  all.insert(all.end(), task->sim_workloads.begin(), task->sim_workloads.end());
  int with_tail = 0;
  for (const auto& workload : all) {
    SCOPED_TRACE(workload.name);
    auto layout = layout_workload(*task, workload);
    ASSERT_TRUE(layout) << layout.error().message;
    const TensorLayout& index = layout->tensors[4];
    const TensorLayout& d = layout->tensors[5];
    const int64_t rows = d.shape[0];
    ASSERT_EQ(index.fixed_bytes.size(), static_cast<size_t>(rows * 4));
    ASSERT_EQ(d.ignored_rows.size(), static_cast<size_t>(rows));
    std::vector<int32_t> values(static_cast<size_t>(rows));
    std::memcpy(values.data(), index.fixed_bytes.data(), index.fixed_bytes.size());
    int32_t last = -1;
    for (int64_t r = 0; r < rows; ++r) {
      const int32_t v = values[static_cast<size_t>(r)];
      EXPECT_EQ(d.ignored_rows[static_cast<size_t>(r)], v == -1 ? 1 : 0);
      if (v >= 0) {
        EXPECT_GE(v, last) << "groups are contiguous and in order, row " << r;
        if (v != last) {
          EXPECT_EQ(r % 128, 0) << "group " << v << " starts aligned";
        }
        last = v;
      }
    }
    if (rows > 0 && values[static_cast<size_t>(rows - 1)] == -1) ++with_tail;
    EXPECT_LT(d.checked_elements(), d.elements());  // every workload has padding rows
  }
  EXPECT_GE(with_tail, 1);
}

TEST(GroupIndex, TheLoaderRefusesMalformedGroupIndexes) {
  EXPECT_THAT(error_after_edit([](auto& j) { j["signature"]["inputs"][4]["dtype"] = "f32"; }),
              HasSubstr("group_index needs an i32 or i64 tensor"));
  EXPECT_THAT(error_after_edit([](auto& j) {
                j["signature"]["inputs"][4]["shape"] = {"G*M", 1};
              }),
              HasSubstr("rank-1"));
  EXPECT_THAT(error_after_edit([](auto& j) { j["input_distribution"]["I"]["colour"] = 1; }),
              HasSubstr("colour"));
  EXPECT_THAT(error_after_edit([](auto& j) { j["input_distribution"]["I"].erase("seed"); }),
              HasSubstr("input_distribution.I.seed"));
  EXPECT_THAT(error_after_edit([](auto& j) { j["input_distribution"]["I"]["groups"] = "Q"; }),
              HasSubstr("names 'Q', which is not a dim"));
  EXPECT_THAT(error_after_edit([](auto& j) { j["input_distribution"]["I"]["align"] = "M-M"; }),
              HasSubstr("group_index arguments out of range"));
  EXPECT_THAT(error_after_edit([](auto& j) { j["input_distribution"]["I"]["spread"] = 2; }),
              HasSubstr("between 0 and 1"));
  EXPECT_THAT(error_after_edit([](auto& j) { j["input_distribution"]["A"]["kind"] = "normal"; }),
              HasSubstr("use \"uniform\" or \"group_index\""));
  EXPECT_THAT(error_after_edit([](auto& j) { j["input_distribution"]["A"]["groups"] = "G"; }),
              HasSubstr("groups"));
}

TEST(GroupIndex, TheLoaderRefusesMalformedIgnoredRows) {
  EXPECT_THAT(error_after_edit([](auto& j) { j["ignore_rows_where"]["output"] = "A"; }),
              HasSubstr("is not an output tensor"));
  EXPECT_THAT(error_after_edit([](auto& j) { j["ignore_rows_where"]["index"] = "D"; }),
              HasSubstr("is not an input tensor"));
  EXPECT_THAT(error_after_edit([](auto& j) { j["ignore_rows_where"]["index"] = "SA"; }),
              HasSubstr("must be a group_index input"));
  EXPECT_THAT(error_after_edit([](auto& j) { j["ignore_rows_where"]["equals"] = 0.5; }),
              HasSubstr("ignore_rows_where.equals"));
  EXPECT_THAT(error_after_edit([](auto& j) { j["ignore_rows_where"]["when"] = 1; }),
              HasSubstr("when"));
  EXPECT_THAT(error_after_edit([](auto& j) { j["ignore_rows_where"] = 3; }),
              HasSubstr("must be an object"));
  EXPECT_THAT(error_after_edit([](auto& j) { j["signature"]["inputs"][4]["shape"] = {"G*M+1"}; }),
              HasSubstr("the index needs one entry per output row"));
  // A list of rules is the same as one rule.
  EXPECT_EQ(error_after_edit([](auto& j) {
              j["ignore_rows_where"] = nlohmann::json::array({j["ignore_rows_where"]});
            }),
            "(loaded without error)");
}

TEST(GroupIndex, HostComparisonSkipsIgnoredRowsEntirely) {
  // 3 rows x 2: row 1 is outside the contract, holds poison and garbage, and counts for nothing.
  const uint64_t poison = PoisonPattern::bits(KILN_BF16, 0);
  const auto bf = [](double x) { return static_cast<uint16_t>(encode(KILN_BF16, x)); };
  const std::vector<uint16_t> expected = {bf(1), bf(2), bf(0), bf(0), bf(5), bf(6)};
  const std::vector<uint16_t> actual = {bf(1),  bf(2), static_cast<uint16_t>(poison),
                                        bf(99), bf(5), bf(6)};
  Tolerance tolerance;
  tolerance.atol = 0.01;
  const std::vector<uint8_t> ignored = {0, 1, 0};
  const ErrorStats masked = compare_host(actual.data(), expected.data(), KILN_BF16, 6, {3, 2},
                                         tolerance, poison, nullptr, &ignored);
  EXPECT_EQ(masked.checked, 4);
  EXPECT_EQ(masked.mismatches, 0);
  EXPECT_EQ(masked.poisoned, 0);
  EXPECT_TRUE(masked.passes(0));
  const ErrorStats whole =
      compare_host(actual.data(), expected.data(), KILN_BF16, 6, {3, 2}, tolerance, poison);
  EXPECT_EQ(whole.checked, 6);
  EXPECT_EQ(whole.mismatches, 2);
  EXPECT_EQ(whole.poisoned, 1);
}

// A stand-in reference for ReferenceCheck: D = 0 on whatever rows it is given.
int zero_reference(const kiln_tensor* t, int n, const kiln_scalar*, int) {
  const kiln_tensor& d = t[n - 1];
  auto* out = static_cast<uint16_t*>(d.data);
  for (int64_t r = 0; r < d.shape[0]; ++r) {
    for (int64_t c = 0; c < d.shape[1]; ++c) {
      out[r * d.shape[1] + c] = static_cast<uint16_t>(encode(KILN_BF16, 0.0));
    }
  }
  return KILN_OK;
}

TEST(GroupIndex, TheReferenceCheckLeavesIgnoredRowsOutOfFullAndSampledPlans) {
  auto task = load_task(bundled_tasks_dir() / "grouped_gemm_fp8");
  ASSERT_TRUE(task) << task.error().message;
  auto layout = layout_workload(*task, task->sim_workloads[1]);
  ASSERT_TRUE(layout) << layout.error().message;
  HostTensors host(layout->tensors.size());
  for (size_t t = 0; t < layout->tensors.size(); ++t)
    host[t].assign(static_cast<size_t>(layout->tensors[t].bytes()), 0);
  // The candidate wrote zeros (the right answer here) on contract rows, left poison elsewhere.
  const TensorLayout& d = layout->tensors[5];
  const uint64_t poison = PoisonPattern::bits(KILN_BF16, 1);
  const int64_t n = d.shape[1];
  for (int64_t r = 0; r < d.shape[0]; ++r) {
    if (d.ignored_rows[static_cast<size_t>(r)] != 0)
      PoisonPattern::fill_host(host[5].data() + r * n * 2, n, KILN_BF16, poison);
  }
  const ReferenceCheck check(zero_reference, task->tolerance);
  auto full = check.check(*layout, host, RowPlan{}, {poison});
  ASSERT_TRUE(full) << full.error().message;
  EXPECT_EQ(full->checked, d.checked_elements());
  EXPECT_EQ(full->poisoned, 0);
  EXPECT_TRUE(full->passes(0)) << full->summary();
  // A sampled plan never picks an ignored row.
  ReferenceBudget tiny;
  tiny.full_check_flops = 0;
  tiny.full_check_elements = 0;
  tiny.sampled_check_flops = 1;
  tiny.min_rows = 16;
  const RowPlan plan = RowSampler::plan(*layout, tiny, 5, {d.shape[0] - 1});
  ASSERT_FALSE(plan.full);
  for (int64_t r : plan.rows) EXPECT_EQ(d.ignored_rows[static_cast<size_t>(r)], 0) << r;
  auto sampled = check.check(*layout, host, plan, {poison});
  ASSERT_TRUE(sampled) << sampled.error().message;
  EXPECT_EQ(sampled->poisoned, 0);
  EXPECT_TRUE(sampled->passes(0)) << sampled->summary();
}

}  // namespace
}  // namespace kiln::tasks
