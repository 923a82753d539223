// Timing helpers shared by the benchmark programs: milliseconds since a start, and the
// percentiles of a sample as JSON.
#pragma once

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <vector>

namespace kiln::bench {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// {"n", "p50_ms", "p90_ms", "p99_ms", "max_ms"} of a non-empty sample.
inline nlohmann::json percentiles(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  auto at = [&](double q) {
    return samples[std::min(samples.size() - 1, static_cast<size_t>(q * samples.size()))];
  };
  return nlohmann::json{{"n", samples.size()},
                        {"p50_ms", at(0.50)},
                        {"p90_ms", at(0.90)},
                        {"p99_ms", at(0.99)},
                        {"max_ms", samples.back()}};
}

}  // namespace kiln::bench
