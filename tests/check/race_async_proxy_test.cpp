// RaceDetector's async-proxy edges on synthetic events: wgmma operand reads last until the
// wgmma.wait_group that retires their group, TMA stores read their shared source until
// cp.async.bulk.wait_group(.read), and the async proxy sees a generic write only through a
// fence.proxy.async by the writer that the issuing thread knows of.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kiln/check/dynamic_racecheck.h"

namespace kiln::check {
namespace {

using sim::AccessKind;
using sim::ObservedSpace;
using sim::SyncKind;

// One CTA of two warps.
class AsyncProxyTest : public ::testing::Test {
 public:
  AsyncProxyTest() {
    ptx_lines_.assign(16, 7);
    texts_.assign(16, "wgmma.mma_async");
    sim::LaunchInfo info;
    info.kernel = "k";
    info.grid = {1, 1, 1};
    info.block = {64, 1, 1};
    info.threads_per_cta = 64;
    info.shared_bytes = 256;
    info.ptx_lines = &ptx_lines_;
    info.texts = &texts_;
    detector_.launch_begin(info);
    detector_.cluster_begin({{0, 0, 0}});
  }

  // A generic 4-byte access by (warp, lane), or the async proxy's for that lane (a TMA copy).
  void touch(uint32_t warp, uint32_t lane, AccessKind kind, uint64_t address,
             ObservedSpace space = ObservedSpace::Shared, bool proxy = false) {
    uint64_t addresses[32] = {};
    uint8_t owners[32] = {};
    addresses[lane] = address;
    sim::AccessEvent e;
    e.space = space;
    e.kind = kind;
    e.async = e.proxy = proxy;
    e.warp = warp;
    e.mask = 1u << lane;
    e.bytes = 4;
    e.pc = kind == AccessKind::Read ? 2 : 1;
    e.address = addresses;
    e.owner = owners;
    detector_.access(e);
  }

  // Warp `warp`'s wgmma reading the 16 bytes at `address`.
  void wgmma(uint32_t warp, uint64_t address) {
    uint64_t addresses[32] = {address};
    uint8_t owners[32] = {};
    sim::AccessEvent e;
    e.space = ObservedSpace::Shared;
    e.kind = AccessKind::Read;
    e.async = e.proxy = e.wgmma = true;
    e.warp = warp;
    e.mask = 1;
    e.bytes = 16;
    e.pc = 3;
    e.address = addresses;
    e.owner = owners;
    detector_.access(e);
  }

  void sync(SyncKind kind, uint32_t warp, uint32_t mask, uint32_t id = 0) {
    sim::SyncEvent e;
    e.kind = kind;
    e.warp = warp;
    e.mask = mask;
    e.id = id;
    e.waits = true;
    detector_.sync(e);
  }
  // TMA transaction bytes of (warp, lane)'s copy at `pc` arriving on the mbarrier at `offset`,
  // completing phase `phase` - 1; and a wait that saw phase `phase` complete.
  void complete_tx(uint32_t warp, uint32_t lane, uint32_t offset, uint32_t phase, uint32_t pc = 1) {
    sim::SyncEvent e;
    e.kind = SyncKind::MbarrierCompleteTx;
    e.async = true;
    e.warp = warp;
    e.mask = 1u << lane;
    e.id = offset;
    e.phase = phase;
    e.pc = pc;
    detector_.sync(e);
  }
  void wait(uint32_t warp, uint32_t lane, uint32_t offset, uint32_t phase) {
    sim::SyncEvent e;
    e.kind = SyncKind::MbarrierWait;
    e.warp = warp;
    e.mask = 1u << lane;
    e.id = offset;
    e.phase = phase;
    detector_.sync(e);
  }
  void barrier() {
    sync(SyncKind::BarrierArrive, 0, ~0u);
    sync(SyncKind::BarrierArrive, 1, ~0u);
    sync(SyncKind::BarrierRelease, 0, 0);
  }

  std::vector<std::string> causes() {
    std::vector<std::string> out;
    for (const RaceFinding& f : detector_.findings()) out.push_back(f.kind + ":" + f.cause);
    return out;
  }

  std::vector<uint32_t> ptx_lines_;
  std::vector<std::string> texts_;
  RaceDetector detector_;
};

using Causes = std::vector<std::string>;

TEST_F(AsyncProxyTest, WgmmaOperandOverwrittenBeforeWaitGroupIsAWar) {
  wgmma(0, 32);
  sync(SyncKind::WgmmaCommit, 0, ~0u);
  barrier();  // orders the threads, not the tensor cores' reads
  touch(1, 4, AccessKind::Write, 40);
  EXPECT_EQ(causes(), Causes{"war:async_proxy"});
  const RaceFinding& f = detector_.findings()[0];
  EXPECT_TRUE(f.first.async);
  EXPECT_EQ(f.first.thread.x, 0u);  // warp 0, named by its lane 0
  EXPECT_NE(f.fix.find("wgmma.wait_group"), std::string::npos) << f.fix;
}

TEST_F(AsyncProxyTest, WaitGroupRetiresOnlyTheGroupsPastItsCount) {
  wgmma(0, 32);
  sync(SyncKind::WgmmaCommit, 0, ~0u);
  wgmma(0, 64);
  sync(SyncKind::WgmmaCommit, 0, ~0u);
  sync(SyncKind::WgmmaWait, 0, ~0u, 1);  // the first group is done, the second pending
  barrier();
  touch(1, 4, AccessKind::Write, 32);  // the first group's bytes: free
  EXPECT_TRUE(causes().empty());
  touch(1, 4, AccessKind::Write, 64);  // the second's: still read
  EXPECT_EQ(causes(), Causes{"war:async_proxy"});
}

TEST_F(AsyncProxyTest, RetiredWgmmaReachesOtherThreadsThroughABarrier) {
  wgmma(0, 32);
  sync(SyncKind::WgmmaCommit, 0, ~0u);
  sync(SyncKind::WgmmaWait, 0, ~0u, 0);
  barrier();
  touch(1, 4, AccessKind::Write, 32);
  EXPECT_TRUE(causes().empty());
}

TEST_F(AsyncProxyTest, GenericWriteReadByWgmmaNeedsAProxyFence) {
  touch(1, 4, AccessKind::Write, 32);
  barrier();
  wgmma(0, 32);
  EXPECT_EQ(causes(), Causes{"raw:missing_proxy_fence"});
  EXPECT_NE(detector_.findings()[0].fix.find("fence.proxy.async"), std::string::npos);
}

TEST_F(AsyncProxyTest, ProxyFenceBeforeTheBarrierOrdersTheWrite) {
  touch(1, 4, AccessKind::Write, 32);
  sync(SyncKind::ProxyFence, 1, 1u << 4);
  barrier();
  wgmma(0, 32);
  EXPECT_TRUE(causes().empty());
}

TEST_F(AsyncProxyTest, ProxyFenceAfterTheBarrierDoesNotCount) {
  touch(1, 4, AccessKind::Write, 32);
  barrier();
  sync(SyncKind::ProxyFence, 1, 1u << 4);
  wgmma(0, 32);
  EXPECT_EQ(causes(), Causes{"raw:missing_proxy_fence"});
}

TEST_F(AsyncProxyTest, ProxyFenceByAnotherThreadDoesNotCount) {
  touch(1, 4, AccessKind::Write, 32);
  sync(SyncKind::ProxyFence, 1, 1u << 5);
  barrier();
  wgmma(0, 32);
  EXPECT_EQ(causes(), Causes{"raw:missing_proxy_fence"});
}

TEST_F(AsyncProxyTest, TmaStoreSourceIsFreeOnlyAfterItsBulkWait) {
  touch(1, 4, AccessKind::Write, 32);
  sync(SyncKind::ProxyFence, 1, 1u << 4);
  barrier();
  touch(0, 0, AccessKind::Read, 32, ObservedSpace::Shared, true);  // the store's read
  sync(SyncKind::BulkCommit, 0, 1);
  EXPECT_TRUE(causes().empty());
  barrier();
  touch(1, 4, AccessKind::Write, 32);
  EXPECT_EQ(causes(), Causes{"war:async_proxy"});
}

TEST_F(AsyncProxyTest, BulkWaitReadThenBarrierFreesTheSource) {
  touch(0, 0, AccessKind::Read, 32, ObservedSpace::Shared, true);
  sync(SyncKind::BulkCommit, 0, 1);
  sync(SyncKind::BulkWait, 0, 1, 0);
  barrier();
  touch(1, 4, AccessKind::Write, 32);
  EXPECT_TRUE(causes().empty());
}

TEST_F(AsyncProxyTest, TmaWritesNeedNoProxyFenceBeforeWgmmaReadsThem) {
  sync(SyncKind::MbarrierInit, 0, 1, 200);
  touch(0, 0, AccessKind::Write, 32, ObservedSpace::Shared, true);  // a TMA load
  complete_tx(0, 0, 200, 1);
  wait(0, 0, 200, 0);
  wgmma(0, 32);
  EXPECT_TRUE(causes().empty());
}

// Two TMA loads in flight on different mbarriers: waiting for the second one's phase orders
// its bytes only, not the first copy's (issued earlier by the same thread).
TEST_F(AsyncProxyTest, EachTmaLoadInFlightIsCompletedByItsOwnMbarrier) {
  sync(SyncKind::MbarrierInit, 0, 1, 200);
  sync(SyncKind::MbarrierInit, 0, 1, 208);
  touch(0, 0, AccessKind::Write, 32, ObservedSpace::Shared, true);  // stage 0 -> mbarrier 200
  complete_tx(0, 0, 200, 1);
  touch(0, 0, AccessKind::Write, 64, ObservedSpace::Shared, true);  // stage 1 -> mbarrier 208
  complete_tx(0, 0, 208, 1);
  wait(1, 4, 208, 0);
  touch(1, 4, AccessKind::Read, 64);
  EXPECT_TRUE(causes().empty());
  touch(1, 4, AccessKind::Read, 32);  // stage 0's phase was never waited for
  EXPECT_EQ(causes(), Causes{"raw:async_proxy"});
  wait(1, 5, 200, 0);
  touch(1, 5, AccessKind::Read, 32);  // ordered now: no new occurrence
  ASSERT_EQ(causes().size(), 1u);
  EXPECT_EQ(detector_.findings()[0].occurrences, 1u);
}

// A thread's cp.async group and its TMA store's bulk group complete separately: waiting for
// the bulk group does not finish the cp.async copy issued before it.
TEST_F(AsyncProxyTest, BulkWaitDoesNotCompleteAnEarlierCpAsyncGroup) {
  uint64_t addresses[32] = {96};
  uint8_t owners[32] = {};
  sim::AccessEvent copy;  // cp.async: async, not the async proxy
  copy.space = ObservedSpace::Shared;
  copy.kind = AccessKind::Write;
  copy.async = true;
  copy.mask = 1;
  copy.bytes = 4;
  copy.pc = 4;
  copy.address = addresses;
  copy.owner = owners;
  detector_.access(copy);
  sync(SyncKind::AsyncCommit, 0, 1);
  touch(0, 0, AccessKind::Read, 128, ObservedSpace::Shared, true);  // a TMA store's source
  sync(SyncKind::BulkCommit, 0, 1);
  sync(SyncKind::BulkWait, 0, 1, 0);
  touch(0, 0, AccessKind::Read, 96);
  EXPECT_EQ(causes(), Causes{"raw:async_proxy"});
  sync(SyncKind::AsyncWait, 0, 1, 0);
  touch(0, 0, AccessKind::Read, 96);  // ordered now: no new occurrence
  ASSERT_EQ(causes().size(), 1u);
  EXPECT_EQ(detector_.findings()[0].occurrences, 1u);
}

TEST_F(AsyncProxyTest, GenericGlobalWriteReadByATmaLoadNeedsAProxyFence) {
  touch(1, 4, AccessKind::Write, 0x7000'0000'0000, ObservedSpace::Global);
  barrier();
  touch(0, 0, AccessKind::Read, 0x7000'0000'0000, ObservedSpace::Global, true);
  complete_tx(0, 0, 200, 1, /*pc=*/2);  // the load's bytes land
  EXPECT_EQ(causes(), Causes{"raw:missing_proxy_fence"});
}

}  // namespace
}  // namespace kiln::check
