#include "priority_schedule.h"

#include <algorithm>
#include <numeric>

namespace kiln::sim {

namespace {

constexpr uint64_t kStepsPerWarp = 64;  // the first cluster's guess at its steps, per warp
constexpr uint64_t kFnvOffset = 1469598103934665603ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;

}  // namespace

PrioritySchedule::PrioritySchedule(const WarpSchedule& schedule)
    : schedule_(schedule), random_(schedule.seed) {}

std::vector<uint32_t> PrioritySchedule::permutation(uint64_t index, uint32_t warps) {
  std::vector<uint32_t> left(warps), out;
  std::iota(left.begin(), left.end(), 0u);
  for (uint32_t radix = warps; radix > 0; --radix) {
    const uint64_t digit = index % radix;
    index /= radix;
    out.push_back(left[digit]);
    left.erase(left.begin() + static_cast<std::ptrdiff_t>(digit));
  }
  return out;
}

void PrioritySchedule::begin_cluster(uint32_t warps) {
  if (step_ != 0) last_steps_ = step_;
  warps_ = warps;
  step_ = 0;
  trace_ = kFnvOffset;
  priority_.assign(warps, 0);
  changes_.clear();
  next_change_ = 0;
  if (schedule_.order == WarpOrder::Exhaustive) {
    const std::vector<uint32_t> order = permutation(schedule_.seed, warps);
    for (uint32_t i = 0; i < warps; ++i) priority_[order[i]] = warps - i;
    return;
  }
  // PCT: priorities depth .. depth + n - 1 in random order; the change point drawn i-th
  // (1-based, at a random step) gives the running warp priority i, below every initial one.
  const uint32_t depth = std::max<uint32_t>(schedule_.depth, 1);
  std::vector<uint32_t> order(warps);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), random_);
  for (uint32_t i = 0; i < warps; ++i) priority_[order[i]] = depth + i;
  const uint64_t steps = std::max<uint64_t>(1, schedule_.steps != 0 ? schedule_.steps
                                               : last_steps_ != 0   ? last_steps_
                                                                    : kStepsPerWarp * warps);
  for (uint32_t i = 1; i < depth; ++i) changes_.push_back({1 + random_() % steps, i});
  std::sort(changes_.begin(), changes_.end());
}

int PrioritySchedule::pick(const std::vector<char>& eligible) const {
  int best = -1;
  for (size_t i = 0; i < eligible.size() && i < priority_.size(); ++i) {
    if (eligible[i] && (best < 0 || priority_[i] > priority_[static_cast<size_t>(best)]))
      best = static_cast<int>(i);
  }
  return best;
}

void PrioritySchedule::stepped(uint32_t warp) {
  ++step_;
  trace_ = (trace_ ^ warp) * kFnvPrime;
  // Several change points may fall on one step; each lowers the warp further.
  while (next_change_ < changes_.size() && changes_[next_change_].first <= step_) {
    if (warp < priority_.size()) priority_[warp] = changes_[next_change_].second;
    ++next_change_;
  }
}

}  // namespace kiln::sim
