// The candidate's device memory, counted from the activity record's allocation and release
// records inside its calls' windows (device_memory gate). A workspace allocated once and kept is
// fine; memory that keeps growing call after call is a leak, which on a long run exhausts the GPU
// and, before that, is work the candidate does that no other call pays for. Pure logic over
// records, tested without a GPU; the candidate host feeds it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/worker/activity_analysis.h"

namespace kiln::worker {

class DeviceMemoryLedger {
 public:
  // Counts the memory records of one candidate call: those inside `window`.
  void add_call(const std::vector<ActivityRecord>& records, const CallWindow& window);

  int64_t calls() const { return calls_; }
  int64_t outstanding_bytes() const { return outstanding_; }  // allocated minus released
  // Empty, or one sentence when the memory kept after the latest call exceeds what was kept
  // after the first call by more than kSlackBytes.
  std::string leak() const;

  static constexpr int64_t kSlackBytes = int64_t{64} << 20;

 private:
  int64_t calls_ = 0;
  int64_t outstanding_ = 0;
  int64_t after_first_ = 0;
  int64_t allocated_in_last_ = 0;
};

}  // namespace kiln::worker
