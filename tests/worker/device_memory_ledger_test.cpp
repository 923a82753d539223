// device_memory_ledger.h: a workspace kept once passes; memory that grows call after call fails.
#include "kiln/worker/device_memory_ledger.h"

#include <gtest/gtest.h>

namespace kiln::worker {
namespace {

ActivityRecord memory(uint64_t at, int64_t bytes) {
  ActivityRecord r;
  r.kind = ActivityRecord::Kind::kMemory;
  r.start = r.end = at;
  r.bytes = bytes;
  return r;
}

CallWindow window(uint64_t open, uint64_t close) {
  CallWindow w;
  w.owner = "candidate";
  w.open = open;
  w.close = close;
  return w;
}

constexpr int64_t kMiB = int64_t{1} << 20;

TEST(DeviceMemoryLedger, AWorkspaceAllocatedOnceAndKeptIsNoLeak) {
  DeviceMemoryLedger ledger;
  ledger.add_call({memory(10, 512 * kMiB)}, window(0, 100));
  for (uint64_t c = 1; c < 10; ++c) ledger.add_call({}, window(c * 100, c * 100 + 50));
  EXPECT_EQ(ledger.outstanding_bytes(), 512 * kMiB);
  EXPECT_EQ(ledger.leak(), "");
}

TEST(DeviceMemoryLedger, AllocatingAndFreeingInEveryCallIsNoLeak) {
  DeviceMemoryLedger ledger;
  for (uint64_t c = 0; c < 10; ++c)
    ledger.add_call({memory(c * 100 + 1, 256 * kMiB), memory(c * 100 + 2, -256 * kMiB)},
                    window(c * 100, c * 100 + 50));
  EXPECT_EQ(ledger.outstanding_bytes(), 0);
  EXPECT_EQ(ledger.leak(), "");
}

TEST(DeviceMemoryLedger, MemoryKeptCallAfterCallIsALeak) {
  DeviceMemoryLedger ledger;
  ledger.add_call({memory(1, 128 * kMiB)}, window(0, 50));
  EXPECT_EQ(ledger.leak(), "");  // one call: a workspace, perhaps
  ledger.add_call({memory(101, 128 * kMiB)}, window(100, 150));
  const std::string leak = ledger.leak();
  EXPECT_NE(leak.find("128 MiB more"), std::string::npos) << leak;
  EXPECT_NE(leak.find("after 2 calls"), std::string::npos) << leak;
}

TEST(DeviceMemoryLedger, OnlyRecordsInsideTheCallsWindowCount) {
  DeviceMemoryLedger ledger;
  // The harness's own allocations (before the window) and other records do not count.
  ActivityRecord kernel;
  kernel.kind = ActivityRecord::Kind::kKernel;
  kernel.start = 20;
  kernel.end = 30;
  ledger.add_call({memory(5, 1024 * kMiB), kernel}, window(10, 50));
  ledger.add_call({memory(200, 1024 * kMiB)}, window(100, 150));
  EXPECT_EQ(ledger.outstanding_bytes(), 0);
  EXPECT_EQ(ledger.leak(), "");
}

}  // namespace
}  // namespace kiln::worker
