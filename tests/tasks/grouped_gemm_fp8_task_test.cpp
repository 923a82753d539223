// tasks/grouped_gemm_fp8: the bundle loads, its CPU reference (built as the harness builds it)
// is exact, and the task's tolerance is measured against deliberately wrong implementations:
// fp32 accumulation per scale block (what a correct kernel does) passes, a bf16 accumulator and
// a dropped scale fail, on every sim workload and on sampled rows of every scored workload.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <iostream>

#include "kiln/tasks/hash_mix.h"
#include "kiln/tasks/numeric_codec.h"
#include "kiln/tasks/output_comparison.h"
#include "kiln/tasks/task.h"
#include "kiln/tasks/tensor_layout.h"
#include "reference_fixture.h"

namespace kiln::tasks {
namespace {

constexpr int64_t kBlock = 128;

// One problem's inputs, with A, SA and I cut to `rows` (rows of the full problem) as the
// harness cuts them for a sampled check; B and SB whole (only the groups those rows use drawn).
struct Problem {
  int64_t rows = 0, groups = 0, N = 0, K = 0;
  std::vector<uint8_t> a, b;
  std::vector<float> sa, sb;
  std::vector<int32_t> index;
  std::vector<int64_t> row_ids;
};

double draw(uint64_t key, uint64_t i, const Distribution& d) {
  return d.low + (d.high - d.low) * unit_draw(key, i);
}

Problem make_problem(const WorkloadLayout& layout, const std::vector<int64_t>& rows) {
  Problem p;
  p.K = layout.tensors[0].shape[1];
  p.groups = layout.tensors[2].shape[0];
  p.N = layout.tensors[2].shape[1];
  p.rows = static_cast<int64_t>(rows.size());
  p.row_ids = rows;
  const int64_t blocks = p.K / kBlock;
  std::vector<int32_t> all(static_cast<size_t>(layout.tensors[4].elements()));
  std::memcpy(all.data(), layout.tensors[4].fixed_bytes.data(), all.size() * 4);
  std::vector<bool> used(static_cast<size_t>(p.groups), false);
  for (int64_t r : rows) {
    p.index.push_back(all[static_cast<size_t>(r)]);
    if (p.index.back() >= 0) used[static_cast<size_t>(p.index.back())] = true;
    const uint64_t ka = stream_key(11, 1, 0, 0), ks = stream_key(11, 1, 1, 0);
    for (int64_t k = 0; k < p.K; ++k)
      p.a.push_back(
          static_cast<uint8_t>(encode(KILN_E4M3, draw(ka, static_cast<uint64_t>(r * p.K + k),
                                                      layout.tensors[0].distribution))));
    for (int64_t b = 0; b < blocks; ++b)
      p.sa.push_back(static_cast<float>(
          draw(ks, static_cast<uint64_t>(r * blocks + b), layout.tensors[1].distribution)));
  }
  p.b.assign(static_cast<size_t>(p.groups * p.N * p.K), 0);
  p.sb.assign(static_cast<size_t>(p.groups * (p.N / kBlock) * blocks), 0);
  const uint64_t kb = stream_key(11, 1, 2, 0), ksb = stream_key(11, 1, 3, 0);
  for (int64_t g = 0; g < p.groups; ++g) {
    if (!used[static_cast<size_t>(g)]) continue;
    for (int64_t i = g * p.N * p.K; i < (g + 1) * p.N * p.K; ++i)
      p.b[static_cast<size_t>(i)] = static_cast<uint8_t>(
          encode(KILN_E4M3, draw(kb, static_cast<uint64_t>(i), layout.tensors[2].distribution)));
    const int64_t per = (p.N / kBlock) * blocks;
    for (int64_t i = g * per; i < (g + 1) * per; ++i)
      p.sb[static_cast<size_t>(i)] =
          static_cast<float>(draw(ksb, static_cast<uint64_t>(i), layout.tensors[3].distribution));
  }
  return p;
}

std::vector<uint16_t> run_reference(kiln_reference_fn reference, Problem& p) {
  std::vector<uint16_t> d(static_cast<size_t>(p.rows * p.N), 0xffff);
  const int64_t blocks = p.K / kBlock;
  kiln_tensor t[6] = {};
  t[0] = {p.a.data(), KILN_E4M3, 2, {p.rows, p.K}, {p.K, 1}, "A"};
  t[1] = {p.sa.data(), KILN_F32, 2, {p.rows, blocks}, {blocks, 1}, "SA"};
  t[2] = {p.b.data(), KILN_E4M3, 3, {p.groups, p.N, p.K}, {p.N * p.K, p.K, 1}, "B"};
  t[3] = {p.sb.data(),
          KILN_F32,
          3,
          {p.groups, p.N / kBlock, blocks},
          {(p.N / kBlock) * blocks, blocks, 1},
          "SB"};
  t[4] = {p.index.data(), KILN_I32, 1, {p.rows}, {1}, "I"};
  t[5] = {d.data(), KILN_BF16, 2, {p.rows, p.N}, {p.N, 1}, "D"};
  kiln_scalar s[2] = {};
  s[0].name = "layout_seed";
  s[0].dtype = KILN_I64;
  s[1].name = "rows_per_group";
  s[1].dtype = KILN_I64;
  EXPECT_EQ(reference(t, 6, s, 2), KILN_OK);
  return d;
}

// e4m3 values through a table (the exact codec, once per code), so the variants below run fast.
double e4m3(uint8_t v) {
  static const std::vector<double> table = [] {
    std::vector<double> t(256);
    for (int i = 0; i < 256; ++i)
      t[static_cast<size_t>(i)] = decode(KILN_E4M3, static_cast<uint64_t>(i));
    return t;
  }();
  return table[v];
}

// x rounded to bf16 (nearest even) and back, for finite x.
float to_bf16(float x) {
  uint32_t u = 0;
  std::memcpy(&u, &x, 4);
  u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  float out = 0;
  std::memcpy(&out, &u, 4);
  return out;
}

// The variants: how a kernel might compute D[r, n] (rounded to bf16 by the caller).
enum class Variant { kFp32PerBlock, kBf16Accumulator, kFirstScaleOnly, kNoScaleOfB };

float compute(const Problem& p, Variant v, int64_t r, int64_t n) {
  const int64_t g = p.index[static_cast<size_t>(r)];
  const int64_t blocks = p.K / kBlock;
  const uint8_t* a = p.a.data() + r * p.K;
  const uint8_t* b = p.b.data() + (g * p.N + n) * p.K;
  const float* sb = p.sb.data() + (g * (p.N / kBlock) + n / kBlock) * blocks;
  float acc = 0;
  for (int64_t blk = 0; blk < blocks; ++blk) {
    float sa = p.sa[static_cast<size_t>(r * blocks + blk)];
    float sbv = sb[blk];
    if (v == Variant::kFirstScaleOnly) sa = p.sa[static_cast<size_t>(r * blocks)];
    if (v == Variant::kNoScaleOfB) sbv = 1.0f / 341.0f;  // a typical SB, not the real one
    float partial = 0;
    for (int64_t k = blk * kBlock; k < (blk + 1) * kBlock; ++k) {
      const auto product = static_cast<float>(e4m3(a[k]) * e4m3(b[k]));
      if (v == Variant::kBf16Accumulator) {
        acc = to_bf16(acc + to_bf16(product * (sa * sbv)));
      } else {
        partial += product;
      }
    }
    if (v != Variant::kBf16Accumulator) acc += partial * (sa * sbv);
  }
  return acc;
}

ErrorStats against_reference(const Problem& p, const std::vector<uint16_t>& ref, Variant v,
                             const Tolerance& tolerance) {
  std::vector<uint16_t> out(ref.size(), 0);
  std::vector<uint8_t> ignored(static_cast<size_t>(p.rows), 0);
  for (int64_t r = 0; r < p.rows; ++r) {
    if (p.index[static_cast<size_t>(r)] < 0) {
      ignored[static_cast<size_t>(r)] = 1;
      continue;
    }
    for (int64_t n = 0; n < p.N; ++n)
      out[static_cast<size_t>(r * p.N + n)] =
          static_cast<uint16_t>(encode(KILN_BF16, compute(p, v, r, n)));
  }
  return compare_host(out.data(), ref.data(), KILN_BF16, p.rows * p.N, {p.rows, p.N}, tolerance, 0,
                      &p.row_ids, &ignored);
}

class GroupedGemmFp8 : public ::testing::Test {
 protected:
  void SetUp() override {
    auto task = load_task(testing::bundled_tasks_dir() / "grouped_gemm_fp8");
    ASSERT_TRUE(task) << task.error().message;
    task_ = *task;
    // One build folder for every test of the suite: KernelBuild reuses a build whose inputs
    // match, so the reference compiles once per test run.
    static testing::TempDir shared;
    const compiler::BuildOutcome build = testing::reference_builder().build(
        testing::reference_request("grouped_gemm_fp8", shared.path() / "reference"));
    ASSERT_TRUE(build.ok) << build.error << build.log;
    reference_ = testing::load_reference(build.library);
    ASSERT_NE(reference_, nullptr);
  }

  // Every variant on `rows` of `workload`: the correct one passes, the wrong ones fail.
  void expect_tolerance_separates(const Workload& workload, const std::vector<int64_t>& rows) {
    SCOPED_TRACE(workload.name);
    auto layout = layout_workload(task_, workload);
    ASSERT_TRUE(layout) << layout.error().message;
    Problem p = make_problem(*layout, rows);
    const std::vector<uint16_t> ref = run_reference(reference_, p);
    const ErrorStats good = against_reference(p, ref, Variant::kFp32PerBlock, task_.tolerance);
    const ErrorStats bf16 = against_reference(p, ref, Variant::kBf16Accumulator, task_.tolerance);
    const ErrorStats first = against_reference(p, ref, Variant::kFirstScaleOnly, task_.tolerance);
    const ErrorStats no_b = against_reference(p, ref, Variant::kNoScaleOfB, task_.tolerance);
    std::cout << "[ measured ] " << workload.name << " (" << rows.size() << " rows, "
              << good.checked << " elements): fp32 per block max abs " << good.max_abs
              << " max rel " << good.max_rel << "; bf16 accumulator " << bf16.mismatches
              << " mismatches (max abs " << bf16.max_abs << "); first SA block only "
              << first.mismatches << "; SB dropped " << no_b.mismatches << "\n";
    EXPECT_GT(good.checked, 0);
    EXPECT_TRUE(good.passes(task_.tolerance.max_mismatch_fraction)) << good.summary();
    EXPECT_FALSE(bf16.passes(task_.tolerance.max_mismatch_fraction)) << bf16.summary();
    EXPECT_FALSE(first.passes(task_.tolerance.max_mismatch_fraction)) << first.summary();
    EXPECT_FALSE(no_b.passes(task_.tolerance.max_mismatch_fraction)) << no_b.summary();
  }

  Task task_;
  kiln_reference_fn reference_ = nullptr;
};

TEST_F(GroupedGemmFp8, BundleLoadsWithFourScoredWorkloadsAndFp8Flops) {
  EXPECT_EQ(task_.workloads.size(), 4u);
  EXPECT_GE(task_.sim_workloads.size(), 3u);
  EXPECT_EQ(task_.tensors.size(), 6u);
  EXPECT_EQ(task_.baseline_libraries, (std::vector<std::string>{"cublasLt"}));
  auto flops = evaluate(task_.flops, task_.workloads[0].dims);
  ASSERT_TRUE(flops);
  EXPECT_EQ(*flops, 2LL * 4 * 8192 * 6144 * 7168);
}

TEST_F(GroupedGemmFp8, TheReferenceMatchesAnIndependentSumAndZeroesPadding) {
  auto layout = layout_workload(task_, task_.sim_workloads[1]);
  ASSERT_TRUE(layout);
  std::vector<int64_t> rows(static_cast<size_t>(layout->tensors[5].shape[0]));
  for (size_t r = 0; r < rows.size(); ++r) rows[r] = static_cast<int64_t>(r);
  Problem p = make_problem(*layout, rows);
  const std::vector<uint16_t> ref = run_reference(reference_, p);
  const int64_t blocks = p.K / kBlock;
  for (int64_t r = 0; r < p.rows; r += 7) {
    const int64_t g = p.index[static_cast<size_t>(r)];
    for (int64_t n = 0; n < p.N; n += 5) {
      const uint16_t got = ref[static_cast<size_t>(r * p.N + n)];
      if (g < 0) {
        EXPECT_EQ(got, 0) << r;
        continue;
      }
      // Independently: every product scaled first, summed in long double.
      long double sum = 0;
      for (int64_t k = 0; k < p.K; ++k) {
        sum += static_cast<long double>(e4m3(p.a[static_cast<size_t>(r * p.K + k)])) *
               e4m3(p.b[static_cast<size_t>((g * p.N + n) * p.K + k)]) *
               p.sa[static_cast<size_t>(r * blocks + k / kBlock)] *
               p.sb[static_cast<size_t>((g * (p.N / kBlock) + n / kBlock) * blocks + k / kBlock)];
      }
      const double expected = decode(KILN_BF16, encode(KILN_BF16, static_cast<double>(sum)));
      EXPECT_NEAR(decode(KILN_BF16, got), expected, std::fabs(expected) * 0.0079 + 1e-12)
          << r << "," << n;  // at most one bf16 step apart (the sum rounds differently)
    }
  }
}

TEST_F(GroupedGemmFp8, ToleranceSeparatesCorrectFromWrongOnEverySimWorkload) {
  for (const auto& workload : task_.sim_workloads) {
    auto layout = layout_workload(task_, workload);
    ASSERT_TRUE(layout);
    std::vector<int64_t> rows(static_cast<size_t>(layout->tensors[5].shape[0]));
    for (size_t r = 0; r < rows.size(); ++r) rows[r] = static_cast<int64_t>(r);
    expect_tolerance_separates(workload, rows);
  }
}

TEST_F(GroupedGemmFp8, ToleranceSeparatesCorrectFromWrongOnSampledRowsOfScoredWorkloads) {
  for (const auto& workload : task_.workloads) {
    auto layout = layout_workload(task_, workload);
    ASSERT_TRUE(layout);
    // The last contract row (of the last non-empty group): one row of N x K products per
    // variant keeps this test to seconds; the sim workloads above check whole outputs.
    const TensorLayout& d = layout->tensors[5];
    int64_t last_valid = 0;
    for (int64_t r = 0; r < d.shape[0]; ++r) {
      if (d.ignored_rows[static_cast<size_t>(r)] == 0) last_valid = r;
    }
    expect_tolerance_separates(workload, {last_valid});
  }
}

}  // namespace
}  // namespace kiln::tasks
