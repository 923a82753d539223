// tasks/rmsnorm: the bundle loads, and its CPU reference (built as the harness builds it)
// computes RMSNorm exactly and rounds once to bf16.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kiln/tasks/numeric_codec.h"
#include "kiln/tasks/task.h"
#include "reference_fixture.h"

namespace kiln::tasks {
namespace {

class RmsnormReference : public ::testing::Test {
 protected:
  void SetUp() override {
    const compiler::BuildOutcome build = testing::reference_builder().build(
        testing::reference_request("rmsnorm", dir_.path() / "reference"));
    ASSERT_TRUE(build.ok) << build.error << build.log;
    reference_ = testing::load_reference(build.library);
    ASSERT_NE(reference_, nullptr);
  }

  int run(std::vector<uint16_t>& x, std::vector<uint16_t>& w, std::vector<uint16_t>& y, int64_t T,
          int64_t H, double eps, int64_t x_row_stride = -1) {
    if (x_row_stride < 0) x_row_stride = H;
    kiln_tensor t[3] = {};
    t[0] = {x.data(), KILN_BF16, 2, {T, H}, {x_row_stride, 1}, "x"};
    t[1] = {w.data(), KILN_BF16, 1, {H}, {1}, "w"};
    t[2] = {y.data(), KILN_BF16, 2, {T, H}, {H, 1}, "y"};
    kiln_scalar s{};
    s.name = "eps";
    s.dtype = KILN_F64;
    s.value.f = eps;
    return reference_(t, 3, &s, 1);
  }

  testing::TempDir dir_;
  kiln_reference_fn reference_ = nullptr;
};

// True when `bits` is x rounded to bf16, to nearest with ties to even.
bool is_rounded(uint16_t bits, double x) {
  const double value = decode(KILN_BF16, bits);
  const double error = std::fabs(value - x);
  for (int step : {-1, 1}) {
    const int neighbour = static_cast<int>(bits & 0x7fff) + step;
    if (neighbour < 0 || neighbour >= 0x7f80) continue;
    const double other =
        std::fabs(decode(KILN_BF16, static_cast<uint16_t>((bits & 0x8000) | neighbour)) - x);
    if (other < error) return false;
    if (other == error && (bits & 1) != 0) return false;
  }
  return true;
}

TEST(RmsnormTask, BundleLoads) {
  auto task = load_task(testing::bundled_tasks_dir() / "rmsnorm");
  ASSERT_TRUE(task.ok()) << task.error().message;
  EXPECT_EQ(task->name, "rmsnorm");
  EXPECT_EQ(task->workloads.size(), 16u);
  EXPECT_EQ(task->tensors.size(), 3u);
  EXPECT_EQ(task->scalars.size(), 1u);
  EXPECT_TRUE(task->baseline_libraries.empty());
  auto bytes = evaluate(task->bytes, task->workloads.back().dims);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, 4LL * 16384 * 16384 + 2 * 16384);
}

TEST_F(RmsnormReference, MatchesAnIndependentComputation) {
  const int64_t T = 5, H = 264;
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> ux(-1, 1), uw(0.5, 1.5);
  std::vector<uint16_t> x(T * H), w(H), y(T * H, 0xffff);
  for (auto& v : x) v = static_cast<uint16_t>(encode(KILN_BF16, ux(rng)));
  for (auto& v : w) v = static_cast<uint16_t>(encode(KILN_BF16, uw(rng)));
  ASSERT_EQ(run(x, w, y, T, H, 1e-6), KILN_OK);
  for (int64_t t = 0; t < T; ++t) {
    double sum = 0;
    for (int64_t h = 0; h < H; ++h)
      sum += decode(KILN_BF16, x[t * H + h]) * decode(KILN_BF16, x[t * H + h]);
    const double scale = 1.0 / std::sqrt(sum / H + 1e-6);
    for (int64_t h = 0; h < H; ++h) {
      const double exact = decode(KILN_BF16, x[t * H + h]) * scale * decode(KILN_BF16, w[h]);
      ASSERT_TRUE(is_rounded(y[t * H + h], exact)) << t << "," << h << ": " << exact;
    }
  }
}

TEST_F(RmsnormReference, ReadsEpsAndStrides) {
  const int64_t T = 2, H = 8;
  std::vector<uint16_t> x(T * 16, static_cast<uint16_t>(encode(KILN_BF16, 0.001))), w(H, 0x3f80),
      y1(T * H), y2(T * H);
  ASSERT_EQ(run(x, w, y1, T, H, 1e-6, 16), KILN_OK);
  ASSERT_EQ(run(x, w, y2, T, H, 1.0, 16), KILN_OK);
  EXPECT_NEAR(decode(KILN_BF16, y1[0]), 0.001 / std::sqrt(1e-6 + 1e-6),
              0.01);  // eps matters at this scale
  EXPECT_NEAR(decode(KILN_BF16, y2[0]), 0.001, 1e-5);
}

TEST_F(RmsnormReference, RefusesBadArguments) {
  std::vector<uint16_t> x(8), w(8), y(8);
  kiln_tensor t[3] = {};
  t[0] = {x.data(), KILN_F16, 2, {1, 8}, {8, 1}, "x"};
  t[1] = {w.data(), KILN_BF16, 1, {8}, {1}, "w"};
  t[2] = {y.data(), KILN_BF16, 2, {1, 8}, {8, 1}, "y"};
  kiln_scalar s{};
  s.dtype = KILN_F64;
  EXPECT_EQ(reference_(t, 3, &s, 1), KILN_ERR_BAD_ARGUMENT);  // x is not bf16
  t[0].dtype = KILN_BF16;
  EXPECT_EQ(reference_(t, 3, &s, 0), KILN_ERR_BAD_ARGUMENT);  // no eps
  t[1].shape[0] = 4;
  EXPECT_EQ(reference_(t, 3, &s, 1), KILN_ERR_BAD_ARGUMENT);  // w does not match H
}

}  // namespace
}  // namespace kiln::tasks
