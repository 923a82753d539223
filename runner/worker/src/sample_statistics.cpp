#include "kiln/worker/sample_statistics.h"

#include <algorithm>
#include <cmath>

namespace kiln::worker {

nlohmann::json SampleSummary::to_json() const {
  return {{"median", median},
          {"p5", p5},
          {"p95", p95},
          {"mean", mean},
          {"cv", cv},
          {"samples", samples},
          {"ci95", {ci_low, ci_high}},
          {"rel_noise", rel_noise}};
}

double SampleStatistics::quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double position = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, values.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return values[below] + (values[above] - values[below]) * fraction;
}

void SampleStatistics::median_interval(std::vector<double> values, double* low, double* high) {
  *low = *high = 0;
  if (values.empty()) return;
  std::sort(values.begin(), values.end());
  const double n = static_cast<double>(values.size());
  const double half_width = 1.96 * std::sqrt(n) / 2;
  // 1-based ranks j and k, converted to 0-based indices.
  const double j = std::floor(n / 2 - half_width);
  const double k = std::ceil(n / 2 + half_width) + 1;
  const auto last = static_cast<double>(values.size() - 1);
  *low = values[static_cast<size_t>(std::clamp(j - 1, 0.0, last))];
  *high = values[static_cast<size_t>(std::clamp(k - 1, 0.0, last))];
}

SampleSummary SampleStatistics::summarize(const std::vector<double>& values) {
  SampleSummary s;
  s.samples = static_cast<int64_t>(values.size());
  if (values.empty()) return s;
  s.median = median(values);
  s.p5 = quantile(values, 0.05);
  s.p95 = quantile(values, 0.95);
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(values.size());
  double squares = 0;
  for (double v : values) squares += (v - s.mean) * (v - s.mean);
  const double stdev =
      values.size() > 1 ? std::sqrt(squares / static_cast<double>(values.size() - 1)) : 0;
  s.cv = s.mean > 0 ? stdev / s.mean : 0;
  median_interval(values, &s.ci_low, &s.ci_high);
  s.rel_noise = s.median > 0 ? (s.ci_high - s.ci_low) / 2 / s.median : 0;
  return s;
}

double SampleStatistics::geomean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double log_sum = 0;
  for (double v : values) {
    if (!(v > 0)) return 0;
    log_sum += std::log(v);
  }
  return std::exp(log_sum / static_cast<double>(values.size()));
}

}  // namespace kiln::worker
