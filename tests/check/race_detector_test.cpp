// RaceDetector driven with synthetic events (no simulator): each happens-before edge orders
// two accesses that race without it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kiln/check/dynamic_racecheck.h"

namespace kiln::check {
namespace {

using sim::AccessKind;
using sim::ObservedSpace;
using sim::Ordering;
using sim::SyncKind;

// One CTA of two warps; lanes are named by (warp, lane).
class DetectorTest : public ::testing::Test {
 public:
  DetectorTest() {
    ptx_lines_.assign(16, 7);
    texts_.assign(16, "st.shared.u32");
    launch();
  }

  // A fresh launch (of the instructions in texts_, by pc: fences at 0, writes 1, reads 2).
  void launch() {
    sim::LaunchInfo info;
    info.kernel = "k";
    info.grid = {2, 1, 1};
    info.block = {64, 1, 1};
    info.threads_per_cta = 64;
    info.shared_bytes = 256;
    info.ptx_lines = &ptx_lines_;
    info.texts = &texts_;
    detector_.launch_begin(info);
    detector_.cluster_begin({{0, 0, 0}});
  }

  void touch(uint32_t warp, uint32_t lane, AccessKind kind, uint64_t address,
             ObservedSpace space = ObservedSpace::Shared, Ordering ordering = Ordering::Weak,
             bool async = false, uint32_t bytes = 4) {
    uint64_t addresses[32] = {};
    uint8_t owners[32] = {};
    addresses[lane] = address;
    sim::AccessEvent e;
    e.space = space;
    e.kind = kind;
    e.ordering = ordering;
    e.async = async;
    e.warp = warp;
    e.mask = 1u << lane;
    e.bytes = bytes;
    e.pc = kind == AccessKind::Read ? 2 : 1;
    e.address = addresses;
    e.owner = owners;
    detector_.access(e);
  }

  void sync(SyncKind kind, uint32_t warp, uint32_t mask, uint32_t id = 0, uint32_t phase = 0,
            bool waits = true, Ordering ordering = Ordering::AcqRel) {
    sim::SyncEvent e;
    e.kind = kind;
    e.warp = warp;
    e.mask = mask;
    e.id = id;
    e.phase = phase;
    e.waits = waits;
    e.ordering = ordering;
    detector_.sync(e);
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

TEST_F(DetectorTest, UnorderedWriteThenReadIsARaw) {
  touch(0, 3, AccessKind::Write, 16);
  touch(1, 5, AccessKind::Read, 16);
  EXPECT_EQ(causes(), Causes{"raw:missing_barrier"});
  EXPECT_EQ(detector_.findings()[0].second.thread.x, 37u);
}

// The shadow keeps a word whose four bytes are alike as one cell (shadow_memory.h): an access
// to part of it, or across two words, must still see each byte's own history.
TEST_F(DetectorTest, PartOfAWholeWordKeepsItsOwnHistory) {
  touch(0, 3, AccessKind::Write, 16);  // the whole word 16..19
  sync(SyncKind::BarrierArrive, 0, ~0u);
  sync(SyncKind::BarrierArrive, 1, ~0u);
  sync(SyncKind::BarrierRelease, 0, 0);
  touch(1, 5, AccessKind::Write, 18, ObservedSpace::Shared, Ordering::Weak, false, 1);
  touch(0, 3, AccessKind::Read, 16);  // bytes 16, 17 and 19 are ordered, 18 is not
  ASSERT_EQ(causes(), Causes{"raw:missing_barrier"});
  EXPECT_EQ(detector_.findings()[0].address, 18u);
  EXPECT_EQ(detector_.findings()[0].first.thread.x, 37u);
}

TEST_F(DetectorTest, AnAccessAcrossTwoWordsChecksBoth) {
  touch(0, 1, AccessKind::Write, 32, ObservedSpace::Shared, Ordering::Weak, false, 8);
  sync(SyncKind::BarrierArrive, 0, ~0u);
  sync(SyncKind::BarrierArrive, 1, ~0u);
  sync(SyncKind::BarrierRelease, 0, 0);
  touch(1, 2, AccessKind::Write, 38, ObservedSpace::Shared, Ordering::Weak, false, 4);  // 38..41
  EXPECT_TRUE(causes().empty());
  touch(0, 1, AccessKind::Read, 40);  // 40 and 41 were written by warp 1 without a barrier
  ASSERT_EQ(causes(), Causes{"raw:missing_barrier"});
  EXPECT_EQ(detector_.findings()[0].address, 40u);
  touch(1, 4, AccessKind::Read, 36, ObservedSpace::Shared, Ordering::Weak, false, 2);  // 36, 37
  EXPECT_EQ(causes().size(), 1u);  // ordered after warp 0's write by the barrier
}

TEST_F(DetectorTest, BarrierOrdersTheWaitersAfterEveryArrival) {
  touch(0, 3, AccessKind::Write, 16);
  sync(SyncKind::BarrierArrive, 0, ~0u);
  sync(SyncKind::BarrierArrive, 1, ~0u);
  sync(SyncKind::BarrierRelease, 0, 0);
  touch(1, 5, AccessKind::Read, 16);
  touch(1, 6, AccessKind::Write, 32);
  EXPECT_TRUE(causes().empty());
}

TEST_F(DetectorTest, ArriveWithoutWaitPublishesButDoesNotAcquire) {
  touch(1, 0, AccessKind::Write, 16);  // the consumer warp writes; the producer may not see it
  sync(SyncKind::BarrierArrive, 0, ~0u, 1, 0, /*waits=*/false);
  sync(SyncKind::BarrierArrive, 1, ~0u, 1, 0, /*waits=*/true);
  sync(SyncKind::BarrierRelease, 0, 0, 1);
  touch(0, 0, AccessKind::Read, 16);
  EXPECT_EQ(causes(), Causes{"raw:missing_barrier"});
}

TEST_F(DetectorTest, LanesOfAWarpNeedAWarpSync) {
  touch(0, 1, AccessKind::Write, 16);
  touch(0, 2, AccessKind::Read, 16);
  EXPECT_EQ(causes(), Causes{"raw:warp_race"});
  touch(0, 1, AccessKind::Write, 32);
  sync(SyncKind::WarpSync, 0, ~0u);
  touch(0, 2, AccessKind::Read, 32);
  EXPECT_EQ(causes().size(), 1u);
}

TEST_F(DetectorTest, AsyncCopyIsOrderedOnlyAfterItsGroupIsWaited) {
  touch(0, 0, AccessKind::Write, 64, ObservedSpace::Shared, Ordering::Weak, /*async=*/true);
  sync(SyncKind::AsyncCommit, 0, 1);
  touch(0, 0, AccessKind::Read, 64);  // before the wait
  EXPECT_EQ(causes(), Causes{"raw:async_proxy"});
  touch(0, 0, AccessKind::Write, 80, ObservedSpace::Shared, Ordering::Weak, true);
  sync(SyncKind::AsyncCommit, 0, 1);
  sync(SyncKind::AsyncWait, 0, 1, /*pending=*/0);
  touch(0, 0, AccessKind::Read, 80);
  EXPECT_EQ(causes().size(), 1u);
}

TEST_F(DetectorTest, MbarrierWaitAcquiresTheCompletedPhase) {
  sync(SyncKind::MbarrierInit, 0, 1, /*offset=*/200);
  touch(1, 0, AccessKind::Write, 16);
  sync(SyncKind::MbarrierArrive, 1, 1, 200, /*phase after=*/1);
  sync(SyncKind::MbarrierWait, 0, 1, 200, /*completed phase=*/0);
  touch(0, 0, AccessKind::Read, 16);
  EXPECT_TRUE(causes().empty());
  touch(1, 0, AccessKind::Write, 20);  // the next phase has not completed
  sync(SyncKind::MbarrierArrive, 1, 1, 200, 1);
  sync(SyncKind::MbarrierWait, 0, 1, 200, 1);  // names a phase that never completed
  touch(0, 0, AccessKind::Read, 20);
  EXPECT_EQ(causes(), Causes{"raw:missing_barrier"});
}

TEST_F(DetectorTest, FencedFlagPublishesAcrossClusters) {
  touch(0, 0, AccessKind::Write, 0x1000, ObservedSpace::Global);
  sync(SyncKind::Fence, 0, 1);
  touch(0, 0, AccessKind::Write, 0x2000, ObservedSpace::Global, Ordering::Relaxed);
  detector_.cluster_begin({{1, 0, 0}});
  touch(0, 0, AccessKind::Read, 0x2000, ObservedSpace::Global, Ordering::Relaxed);
  sync(SyncKind::Fence, 0, 1);
  touch(0, 0, AccessKind::Read, 0x1000, ObservedSpace::Global);
  EXPECT_TRUE(causes().empty());
}

TEST_F(DetectorTest, UnfencedFlagIsAMissingFence) {
  touch(0, 0, AccessKind::Write, 0x1000, ObservedSpace::Global);
  touch(0, 0, AccessKind::Write, 0x2000, ObservedSpace::Global, Ordering::Relaxed);
  detector_.cluster_begin({{1, 0, 0}});
  touch(0, 0, AccessKind::Read, 0x2000, ObservedSpace::Global, Ordering::Relaxed);
  touch(0, 0, AccessKind::Read, 0x1000, ObservedSpace::Global);
  EXPECT_EQ(causes(), Causes{"raw:missing_fence"});
}

TEST_F(DetectorTest, AtomicsDoNotRaceWithEachOtherButDoWithPlainStores) {
  touch(0, 0, AccessKind::Atomic, 0x3000, ObservedSpace::Global, Ordering::Relaxed);
  touch(1, 0, AccessKind::Atomic, 0x3000, ObservedSpace::Global, Ordering::Relaxed);
  EXPECT_TRUE(causes().empty());
  touch(1, 1, AccessKind::Write, 0x3000, ObservedSpace::Global);
  EXPECT_EQ(causes().size(), 1u);
  EXPECT_EQ(detector_.findings()[0].kind, "waw");
}

TEST_F(DetectorTest, OtherCtasWritingOneWordIsACrossCtaRace) {
  touch(0, 0, AccessKind::Write, 0x4000, ObservedSpace::Global);
  detector_.cluster_begin({{1, 0, 0}});
  touch(0, 0, AccessKind::Write, 0x4000, ObservedSpace::Global);
  EXPECT_EQ(causes(), Causes{"waw:cross_cta"});
  EXPECT_EQ(detector_.findings()[0].first.block.x, 0u);
  EXPECT_EQ(detector_.findings()[0].second.block.x, 1u);
}

// The fenced flag of FencedFlagPublishesAcrossClusters, with fences of .cta scope
// (__threadfence_block): they order the data only within a CTA, so the other CTA's read races.
TEST_F(DetectorTest, CtaScopedFencesDoNotPublishToAnotherCta) {
  texts_[0] = "membar.cta;";
  launch();
  touch(0, 0, AccessKind::Write, 0x1000, ObservedSpace::Global);
  sync(SyncKind::Fence, 0, 1);
  touch(0, 0, AccessKind::Write, 0x2000, ObservedSpace::Global, Ordering::Relaxed);
  detector_.cluster_begin({{1, 0, 0}});
  touch(0, 0, AccessKind::Read, 0x2000, ObservedSpace::Global, Ordering::Relaxed);
  sync(SyncKind::Fence, 0, 1);
  touch(0, 0, AccessKind::Read, 0x1000, ObservedSpace::Global);
  EXPECT_EQ(causes(), Causes{"raw:narrow_scope"});
  EXPECT_NE(detector_.findings()[0].fix.find("__threadfence()"), std::string::npos);
}

// Within one CTA a .cta release and acquire are enough.
TEST_F(DetectorTest, CtaScopedReleaseOrdersThreadsOfItsOwnCta) {
  texts_[1] = "st.release.cta.shared.b32";
  texts_[2] = "ld.acquire.cta.shared.b32";
  launch();
  touch(0, 0, AccessKind::Write, 0x10);
  touch(0, 0, AccessKind::Write, 0x20, ObservedSpace::Shared, Ordering::Release);
  touch(1, 0, AccessKind::Read, 0x20, ObservedSpace::Shared, Ordering::Acquire);
  touch(1, 0, AccessKind::Read, 0x10);
  EXPECT_TRUE(causes().empty());
}

// A .gpu release read by an acquire of .cta scope in another CTA does not synchronize either:
// both sides need a scope that includes the other.
TEST_F(DetectorTest, CtaScopedAcquireOfAGpuReleaseInAnotherCtaIsNarrow) {
  texts_[1] = "st.release.gpu.global.b32";
  texts_[2] = "ld.acquire.cta.global.b32";
  launch();
  touch(0, 0, AccessKind::Write, 0x1000, ObservedSpace::Global);
  touch(0, 0, AccessKind::Write, 0x2000, ObservedSpace::Global, Ordering::Release);
  detector_.cluster_begin({{1, 0, 0}});
  touch(0, 0, AccessKind::Read, 0x2000, ObservedSpace::Global, Ordering::Acquire);
  touch(0, 0, AccessKind::Read, 0x1000, ObservedSpace::Global);
  EXPECT_EQ(causes(), Causes{"raw:narrow_scope"});
}

}  // namespace
}  // namespace kiln::check
