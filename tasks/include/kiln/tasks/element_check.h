// The task's per-element tolerance rule (tasks/FORMAT.md, "tolerance"), shared by the
// GPU comparison kernel and the host-side check against the CPU reference:
//   finite values pass when |actual - expected| <= atol + rtol * |expected|;
//   NaN must meet NaN, and an infinity the same infinity.
// A task's max_mismatch_fraction forgives near misses only: an element outside
// kNearMissFactor times the tolerance (or non-finite where the reference is finite) fails the
// workload whatever the fraction, so a candidate cannot hide a wrong value in the allowance.
#pragma once

#include "kiln/tasks/host_device.h"

namespace kiln::tasks {

KILN_HD inline bool is_nan(double x) { return x != x; }
KILN_HD inline bool is_inf(double x) { return !is_nan(x) && is_nan(x - x); }
KILN_HD inline double magnitude(double x) { return x < 0 ? -x : x; }

KILN_HD inline bool element_passes(double actual, double expected, double atol, double rtol) {
  if (is_nan(expected)) return is_nan(actual);
  if (is_inf(expected)) return actual == expected;
  if (is_nan(actual) || is_inf(actual)) return false;
  return magnitude(actual - expected) <= atol + rtol * magnitude(expected);
}

// How far beyond the tolerance a mismatch still counts as a near miss (rounding where terms
// cancel: FP8 tensor-core accumulation misses atol by a few times on a handful of elements).
inline constexpr double kNearMissFactor = 16;

// A mismatch no max_mismatch_fraction forgives.
KILN_HD inline bool element_far(double actual, double expected, double atol, double rtol) {
  return !element_passes(actual, expected, kNearMissFactor * atol, kNearMissFactor * rtol);
}

}  // namespace kiln::tasks
