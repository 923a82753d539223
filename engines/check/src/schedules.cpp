#include "kiln/check/schedules.h"

#include <algorithm>
#include <cctype>

namespace kiln::check {

using sim::WarpOrder;

std::vector<sim::WarpSchedule> race_schedules(uint32_t count, uint64_t seed, WarpOrder explore,
                                              uint32_t depth) {
  std::vector<sim::WarpSchedule> out;
  for (uint32_t i = 0; i < count; ++i) {
    sim::WarpSchedule s;
    if (i == 0) {
      s.order = WarpOrder::InOrder;
    } else if (i == 1) {
      s.order = WarpOrder::Reversed;
    } else if (explore == WarpOrder::Exhaustive) {
      s.order = WarpOrder::Exhaustive;
      s.seed = i - 2;
    } else {
      s.order = explore == WarpOrder::Pct ? WarpOrder::Pct : WarpOrder::Random;
      s.seed = seed + i - 2;
      // PCT at depths 1, 2, ..., depth in turn: a run at depth d is best at bugs of depth d
      // (more change points only dilute a shallower bug's chance).
      if (s.order == WarpOrder::Pct) s.depth = 1 + (i - 2) % std::max<uint32_t>(depth, 1);
    }
    out.push_back(s);
  }
  return out;
}

std::string schedule_name(const sim::WarpSchedule& s) {
  switch (s.order) {
    case WarpOrder::InOrder:
      return "in_order";
    case WarpOrder::Reversed:
      return "reversed";
    case WarpOrder::Random:
      return "random";
    case WarpOrder::Pct:
      return "pct";
    case WarpOrder::Exhaustive:
      return "exhaustive";
  }
  return "in_order";
}

uint64_t schedule_seed(const sim::WarpSchedule& s) {
  const bool seeded =
      s.order == WarpOrder::Random || s.order == WarpOrder::Pct || s.order == WarpOrder::Exhaustive;
  return seeded ? s.seed : 0;
}

std::string schedule_label(const sim::WarpSchedule& s) {
  const bool seeded =
      s.order == WarpOrder::Random || s.order == WarpOrder::Pct || s.order == WarpOrder::Exhaustive;
  std::string label = seeded ? schedule_name(s) + ":" + std::to_string(s.seed) : schedule_name(s);
  if (s.order == WarpOrder::Pct) label += ":d" + std::to_string(s.depth);
  return label;
}

bool parse_schedule_label(const std::string& label, sim::WarpSchedule* out) {
  sim::WarpSchedule s;
  const size_t colon = label.find(':');
  const std::string name = label.substr(0, colon);
  if (name == "in_order" || name == "reversed") {
    if (colon != std::string::npos) return false;
    s.order = name == "in_order" ? WarpOrder::InOrder : WarpOrder::Reversed;
    *out = s;
    return true;
  }
  if (!parse_exploration(name, &s.order) || colon == std::string::npos) return false;
  std::string rest = label.substr(colon + 1);
  const size_t depth_at = rest.find(":d");
  std::string seed = rest.substr(0, depth_at);
  auto digits = [](const std::string& t) {
    return !t.empty() && t.size() < 20 &&
           std::all_of(t.begin(), t.end(), [](unsigned char c) { return std::isdigit(c); });
  };
  if (!digits(seed)) return false;
  s.seed = std::stoull(seed);
  if (s.order == WarpOrder::Pct) {
    if (depth_at == std::string::npos) return false;
    const std::string depth = rest.substr(depth_at + 2);
    if (!digits(depth) || std::stoul(depth) == 0 || std::stoul(depth) > 16) return false;
    s.depth = static_cast<uint32_t>(std::stoul(depth));
  } else if (depth_at != std::string::npos) {
    return false;
  }
  *out = s;
  return true;
}

bool parse_exploration(const std::string& word, WarpOrder* order) {
  if (word == "random")
    *order = WarpOrder::Random;
  else if (word == "pct")
    *order = WarpOrder::Pct;
  else if (word == "exhaustive")
    *order = WarpOrder::Exhaustive;
  else
    return false;
  return true;
}

uint64_t priority_orders(uint32_t warps) {
  uint64_t n = 1;
  for (uint32_t i = 2; i <= warps; ++i) {
    if (n > UINT64_MAX / i) return UINT64_MAX;
    n *= i;
  }
  return n;
}

void ScheduleLog::set_schedule(const sim::WarpSchedule& schedule) {
  schedule_ = schedule;
  trace_ = 0;
  steps_ = 0;
  max_warps_ = 0;
}

void ScheduleLog::cluster_schedule(const sim::ClusterSchedule& cluster) {
  trace_ = (trace_ ^ cluster.trace) * 1099511628211ull + cluster.steps;
  steps_ += cluster.steps;
  max_warps_ = std::max(max_warps_, cluster.warps);
}

}  // namespace kiln::check
