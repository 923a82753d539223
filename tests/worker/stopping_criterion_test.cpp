// stopping_criterion.h: when sampling a workload stops.
#include "kiln/worker/stopping_criterion.h"

#include <gtest/gtest.h>

#include <random>

namespace kiln::worker {
namespace {

StoppingLimits limits(int64_t min_samples, int64_t max_samples, double noise, double budget) {
  StoppingLimits l;
  l.min_samples = min_samples;
  l.max_samples = max_samples;
  l.target_rel_noise = noise;
  l.time_budget_seconds = budget;
  return l;
}

TEST(StoppingCriterion, WaitsForTheMinimum) {
  const StoppingCriterion c(limits(10, 100, 0.005, 60));
  std::vector<double> steady(9, 100.0);
  EXPECT_EQ(c.decide({&steady, &steady}, 1), StopReason::kContinue);
  steady.push_back(100.0);
  EXPECT_EQ(c.decide({&steady, &steady}, 1), StopReason::kConverged);
}

TEST(StoppingCriterion, NeedsEverySeriesToSettle) {
  const StoppingCriterion c(limits(10, 1000, 0.005, 60));
  std::vector<double> steady(40, 100.0);
  std::vector<double> noisy;
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> spread(80, 120);
  for (int i = 0; i < 40; ++i) noisy.push_back(spread(rng));
  EXPECT_EQ(c.decide({&steady, &noisy}, 1), StopReason::kContinue);
  EXPECT_GT(StoppingCriterion::relative_noise(noisy), 0.005);
}

TEST(StoppingCriterion, StopsAtMaxSamples) {
  const StoppingCriterion c(limits(5, 20, 1e-9, 60));
  std::vector<double> noisy;
  for (int i = 0; i < 20; ++i) noisy.push_back(i % 2 ? 1.0 : 2.0);
  EXPECT_EQ(c.decide({&noisy}, 1), StopReason::kMaxSamples);
}

TEST(StoppingCriterion, StopsWhenTheTimeIsSpent) {
  const StoppingCriterion c(limits(10, 200, 1e-9, 5));
  std::vector<double> few = {1, 2, 3};
  EXPECT_EQ(c.decide({&few}, 6), StopReason::kTimeBudget);
  std::vector<double> two = {1, 2};
  EXPECT_EQ(c.decide({&two}, 6), StopReason::kContinue);  // fewer than 3: a little more time
  EXPECT_EQ(c.decide({&two}, 11), StopReason::kTimeBudget);
  EXPECT_STREQ(stop_reason_name(StopReason::kTimeBudget), "time_budget");
}

}  // namespace
}  // namespace kiln::worker
