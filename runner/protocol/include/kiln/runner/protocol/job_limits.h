// How long and how hard a job may measure: the `limits` object of a POST /v1/jobs body and of
// job.json (runner/protocol/PROTOCOL.md). The server checks a client's limits against these
// bounds and the worker checks job.json against the same ones, so a job the server accepted
// is never refused by its worker.
#pragma once

#include <cstdint>
#include <string_view>

namespace kiln::runner::protocol {

struct JobLimits {
  double job_seconds = 600;  // the server lowers it to its own --job-seconds
  int64_t min_samples = 10;
  int64_t max_samples = 200;
  double target_rel_noise = 0.005;
  double sample_time_cap_seconds = 20;  // sampling time per workload
};

// The field names inside `limits`.
namespace limit_field {
inline constexpr std::string_view kJobSeconds = "job_seconds";
inline constexpr std::string_view kMinSamples = "min_samples";
inline constexpr std::string_view kMaxSamples = "max_samples";
inline constexpr std::string_view kTargetRelNoise = "target_rel_noise";
inline constexpr std::string_view kSampleTimeCapSeconds = "sample_time_cap_seconds";
}  // namespace limit_field

// A time or a fraction: greater than `above`, at most `at_most`.
struct NumberBound {
  double above;
  double at_most;
  constexpr bool contains(double value) const { return value > above && value <= at_most; }
};

// A count: from `min` to `max`, both included.
struct CountBound {
  int64_t min;
  int64_t max;
  constexpr bool contains(int64_t value) const { return value >= min && value <= max; }
};

inline constexpr NumberBound kJobSecondsBound{0, 86400};  // a day; `kiln runner` caps lower
inline constexpr CountBound kMinSamplesBound{1, 100000};
inline constexpr CountBound kMaxSamplesBound{1, 1000000};
inline constexpr NumberBound kTargetRelNoiseBound{0, 1};
inline constexpr NumberBound kSampleTimeCapBound{0, 86400};

// True when every limit is within its bound and max_samples is at least min_samples.
constexpr bool within_bounds(const JobLimits& limits) {
  return kJobSecondsBound.contains(limits.job_seconds) &&
         kMinSamplesBound.contains(limits.min_samples) &&
         kMaxSamplesBound.contains(limits.max_samples) &&
         kTargetRelNoiseBound.contains(limits.target_rel_noise) &&
         kSampleTimeCapBound.contains(limits.sample_time_cap_seconds) &&
         limits.max_samples >= limits.min_samples;
}

}  // namespace kiln::runner::protocol
