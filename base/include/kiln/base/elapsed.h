// Seconds on the steady clock since a moment: the one way kiln's progress lines and reports
// measure how long a step took.
#pragma once

#include <chrono>

namespace kiln {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace kiln
