// The task's per-element tolerance rule (tasks/FORMAT.md, "tolerance"), shared by the
// GPU comparison kernel and the host-side check against the CPU reference:
//   finite values pass when |actual - expected| <= atol + rtol * |expected|;
//   NaN must meet NaN, and an infinity the same infinity.
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

}  // namespace kiln::tasks
