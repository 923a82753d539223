#include "kiln/worker/device_memory_ledger.h"

namespace kiln::worker {

namespace {

std::string mib(int64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

void DeviceMemoryLedger::add_call(const std::vector<ActivityRecord>& records,
                                  const CallWindow& window) {
  allocated_in_last_ = 0;
  for (const auto& r : records) {
    if (r.kind != ActivityRecord::Kind::kMemory || r.start < window.open || r.start > window.close)
      continue;
    outstanding_ += r.bytes;
    if (r.bytes > 0) allocated_in_last_ += r.bytes;
  }
  if (++calls_ == 1) after_first_ = outstanding_;
}

std::string DeviceMemoryLedger::leak() const {
  const int64_t growth = outstanding_ - after_first_;
  if (calls_ < 2 || growth <= kSlackBytes) return "";
  return "the candidate kept " + mib(growth) + " more device memory after " +
         std::to_string(calls_) + " calls than after its first (" + mib(allocated_in_last_) +
         " allocated in the last call); free per-call allocations before kiln_launch returns, "
         "or allocate a workspace once and reuse it";
}

}  // namespace kiln::worker
