// Summary statistics of a series of timings (microseconds).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

namespace kiln::worker {

struct SampleSummary {
  int64_t samples = 0;
  double median = 0;
  double p5 = 0;
  double p95 = 0;
  double mean = 0;
  double cv = 0;      // standard deviation / mean
  double ci_low = 0;  // 95% confidence interval of the median (order statistics)
  double ci_high = 0;
  double rel_noise = 0;  // (ci_high - ci_low) / 2 / median

  nlohmann::json to_json() const;
};

class SampleStatistics {
 public:
  // Linear interpolation between order statistics, q in [0, 1].
  static double quantile(std::vector<double> values, double q);
  static double median(std::vector<double> values) { return quantile(std::move(values), 0.5); }
  // Distribution-free 95% interval for the median: the order statistics at
  // n/2 -+ 1.96*sqrt(n)/2 (normal approximation to the binomial), clamped to the data.
  static void median_interval(std::vector<double> values, double* low, double* high);
  static SampleSummary summarize(const std::vector<double>& values);
  // The geometric mean of positive values; 0 when empty or any value <= 0.
  static double geomean(const std::vector<double>& values);
};

}  // namespace kiln::worker
