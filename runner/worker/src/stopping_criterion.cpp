#include "kiln/worker/stopping_criterion.h"

#include <algorithm>

#include "kiln/worker/sample_statistics.h"

namespace kiln::worker {

const char* stop_reason_name(StopReason reason) {
  switch (reason) {
    case StopReason::kContinue:
      return "running";
    case StopReason::kConverged:
      return "converged";
    case StopReason::kMaxSamples:
      return "max_samples";
    case StopReason::kTimeBudget:
      return "time_budget";
  }
  return "?";
}

double StoppingCriterion::relative_noise(const std::vector<double>& samples) {
  return SampleStatistics::summarize(samples).rel_noise;
}

StopReason StoppingCriterion::decide(const std::vector<const std::vector<double>*>& series,
                                     double elapsed_seconds) const {
  size_t fewest = series.empty() ? 0 : series.front()->size();
  for (const auto* s : series) fewest = std::min(fewest, s->size());
  const auto count = static_cast<int64_t>(fewest);
  if (count >= limits_.min_samples) {
    bool settled = true;
    for (const auto* s : series) settled = settled && relative_noise(*s) < limits_.target_rel_noise;
    if (settled) return StopReason::kConverged;
  }
  if (count >= limits_.max_samples) return StopReason::kMaxSamples;
  // The time budget ends sampling only once the minimum is there, unless it is far exceeded.
  if (elapsed_seconds >= limits_.time_budget_seconds &&
      (count >= std::min<int64_t>(limits_.min_samples, 3) ||
       elapsed_seconds >= 2 * limits_.time_budget_seconds)) {
    return StopReason::kTimeBudget;
  }
  return StopReason::kContinue;
}

}  // namespace kiln::worker
