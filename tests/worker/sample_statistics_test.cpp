// sample_statistics.h: quantiles, the median's confidence interval and summaries.
#include "kiln/worker/sample_statistics.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kiln::worker {
namespace {

TEST(SampleStatistics, QuantilesInterpolate) {
  const std::vector<double> v = {4, 1, 3, 2, 5};
  EXPECT_DOUBLE_EQ(SampleStatistics::median(v), 3);
  EXPECT_DOUBLE_EQ(SampleStatistics::quantile(v, 0), 1);
  EXPECT_DOUBLE_EQ(SampleStatistics::quantile(v, 1), 5);
  EXPECT_DOUBLE_EQ(SampleStatistics::quantile(v, 0.25), 2);
  EXPECT_DOUBLE_EQ(SampleStatistics::median({1, 2, 3, 4}), 2.5);
  EXPECT_DOUBLE_EQ(SampleStatistics::median({}), 0);
}

TEST(SampleStatistics, MedianIntervalNarrowsWithMoreSamples) {
  std::vector<double> few, many;
  for (int i = 0; i < 10; ++i) few.push_back(100 + i);
  for (int i = 0; i < 400; ++i) many.push_back(100 + (i % 10));
  double lo = 0, hi = 0;
  SampleStatistics::median_interval(few, &lo, &hi);
  EXPECT_EQ(lo, 100);  // ten samples: the interval is the whole range
  EXPECT_EQ(hi, 109);
  SampleStatistics::median_interval(many, &lo, &hi);
  EXPECT_GE(lo, 103);
  EXPECT_LE(hi, 106);
}

TEST(SampleStatistics, SummaryOrdersItsPercentiles) {
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  const SampleSummary s = SampleStatistics::summarize(v);
  EXPECT_EQ(s.samples, 100);
  EXPECT_LE(s.p5, s.median);
  EXPECT_LE(s.median, s.p95);
  EXPECT_NEAR(s.mean, 50.5, 1e-9);
  EXPECT_NEAR(s.cv, std::sqrt(841.6666) / 50.5, 1e-3);
  EXPECT_GT(s.rel_noise, 0);
  const nlohmann::json j = s.to_json();
  for (const char* key : {"median", "p5", "p95", "cv", "samples"})
    EXPECT_TRUE(j.contains(key)) << key;
}

TEST(SampleStatistics, ConstantSeriesHasNoNoise) {
  const SampleSummary s = SampleStatistics::summarize({7, 7, 7, 7, 7, 7, 7, 7, 7, 7});
  EXPECT_EQ(s.cv, 0);
  EXPECT_EQ(s.rel_noise, 0);
}

TEST(SampleStatistics, Geomean) {
  EXPECT_NEAR(SampleStatistics::geomean({1, 4}), 2, 1e-12);
  EXPECT_NEAR(SampleStatistics::geomean({0.5, 2, 1}), 1, 1e-12);
  EXPECT_EQ(SampleStatistics::geomean({}), 0);
  EXPECT_EQ(SampleStatistics::geomean({1, 0}), 0);
}

}  // namespace
}  // namespace kiln::worker
