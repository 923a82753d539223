// When to stop taking samples of one workload (nvbench's stdrel criterion, with the
// median's confidence interval instead of the standard deviation, so a few slow
// outliers do not keep the loop running): stop once both the candidate's and the
// baseline's relative noise is under the target after min_samples, or at
// max_samples, or when the workload's time budget is spent.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::worker {

struct StoppingLimits {
  int64_t min_samples = 10;
  int64_t max_samples = 200;
  double target_rel_noise = 0.005;
  double time_budget_seconds = 20;
};

enum class StopReason { kContinue, kConverged, kMaxSamples, kTimeBudget };

const char* stop_reason_name(StopReason reason);

class StoppingCriterion {
 public:
  explicit StoppingCriterion(StoppingLimits limits) : limits_(limits) {}

  // `series` are the sample series that must all settle (candidate, baseline).
  StopReason decide(const std::vector<const std::vector<double>*>& series,
                    double elapsed_seconds) const;
  // The relative noise of one series: half the width of the median's 95% interval over the median.
  static double relative_noise(const std::vector<double>& samples);

  const StoppingLimits& limits() const { return limits_; }

 private:
  StoppingLimits limits_;
};

}  // namespace kiln::worker
