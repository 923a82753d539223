// Reading a job's "limits" object against the protocol's bounds, once for both sides: the
// server reads the client's request with it and the worker reads job.json with it, so the
// worker accepts every job the server accepted. Header-only over kiln_base's JsonField (the
// only file of this module that needs JSON; include it only where JSON is read).
#pragma once

#include <string>

#include "kiln/base/json_field.h"
#include "kiln/runner/protocol/job_fields.h"
#include "kiln/runner/protocol/job_limits.h"

namespace kiln::runner::protocol {

// Fields absent from `limits` keep the values `out` has; a present field out of its bound, or
// max_samples below min_samples, throws JsonFieldError naming the field.
inline void read_limits(const JsonField& limits, JobLimits& out) {
  namespace limit = limit_field;
  limits.allow_only({limit::kJobSeconds, limit::kMinSamples, limit::kMaxSamples,
                     limit::kTargetRelNoise, limit::kSampleTimeCapSeconds});
  if (auto value = limits.find(limit::kJobSeconds))
    out.job_seconds = value->number_above(kJobSecondsBound.above, kJobSecondsBound.at_most);
  if (auto value = limits.find(limit::kMinSamples))
    out.min_samples = value->integer_between(kMinSamplesBound.min, kMinSamplesBound.max);
  if (auto value = limits.find(limit::kMaxSamples))
    out.max_samples = value->integer_between(kMaxSamplesBound.min, kMaxSamplesBound.max);
  if (auto value = limits.find(limit::kTargetRelNoise))
    out.target_rel_noise =
        value->number_above(kTargetRelNoiseBound.above, kTargetRelNoiseBound.at_most);
  if (auto value = limits.find(limit::kSampleTimeCapSeconds))
    out.sample_time_cap_seconds =
        value->number_above(kSampleTimeCapBound.above, kSampleTimeCapBound.at_most);
  if (out.max_samples < out.min_samples)
    throw JsonFieldError{limits.path() + "." + std::string(limit::kMaxSamples),
                         "is below limits.min_samples (" + std::to_string(out.min_samples) +
                             "); raise it or lower min_samples"};
}

}  // namespace kiln::runner::protocol
