// SyncMonitor driven with synthetic events (no simulator): each rule on the smallest sequence
// of events that breaks it, and the same sequence done right reporting nothing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/check/dynamic_synccheck.h"

namespace kiln::check {
namespace {

using sim::SyncEvent;
using sim::SyncKind;

constexpr uint32_t kBar = 0x40;  // the mbarrier's shared offset

// One CTA of two warps; PTX line of code index i is 10 + i.
class MonitorTest : public ::testing::Test {
 public:
  MonitorTest() {
    for (uint32_t i = 0; i < 32; ++i) {
      ptx_lines_.push_back(10 + i);
      texts_.push_back("op" + std::to_string(i));
    }
    begin();
  }

  void begin() {
    sim::LaunchInfo info;
    info.kernel = "k";
    info.grid = {1, 1, 1};
    info.block = {64, 1, 1};
    info.threads_per_cta = 64;
    info.ptx_lines = &ptx_lines_;
    info.texts = &texts_;
    monitor_.launch_begin(info);
    monitor_.cluster_begin({{0, 0, 0}});
  }
  void end() { monitor_.launch_end(std::vector<std::string>(32, "k.cu:1:1")); }

  SyncEvent event(SyncKind kind, uint32_t warp, uint32_t lane, uint32_t pc) {
    SyncEvent e;
    e.kind = kind;
    e.warp = warp;
    e.mask = 1u << lane;
    e.pc = pc;
    e.id = kBar;
    return e;
  }
  void init(uint32_t count, uint32_t pc = 0) {
    SyncEvent e = event(SyncKind::MbarrierInit, 0, 0, pc);
    e.count = count;
    monitor_.sync(e);
  }
  // An arrival; `phase`: the barrier's completed phases after it.
  void arrive(uint32_t warp, uint32_t lane, uint32_t phase, uint32_t pc = 1, uint32_t count = 1,
              uint32_t tx_bytes = 0) {
    SyncEvent e = event(SyncKind::MbarrierArrive, warp, lane, pc);
    e.count = count;
    e.tx_bytes = tx_bytes;
    e.phase = phase;
    monitor_.sync(e);
  }
  // A parity wait; `completed`: the barrier's completed phases at the wait.
  void wait(uint32_t warp, uint32_t lane, uint32_t parity, uint32_t completed, uint32_t pc = 2) {
    bool done = (completed & 1) != (parity & 1);
    SyncEvent e =
        event(done ? SyncKind::MbarrierWait : SyncKind::MbarrierWaitPending, warp, lane, pc);
    e.parity = true;
    e.count = parity;
    e.phase = done ? completed - 1 : completed;
    e.pending = 1;
    monitor_.sync(e);
  }
  // `count`: the instruction's thread count (0: every thread); `before`: threads arrived.
  void barrier(uint32_t warp, uint32_t pc, uint32_t id = 0, uint32_t count = 0,
               uint32_t before = 0) {
    SyncEvent e = event(SyncKind::BarrierArrive, warp, 0, pc);
    e.mask = 0xffffffffu;
    e.id = id;
    e.waits = true;
    e.expected = count;
    e.count = before;
    monitor_.sync(e);
  }
  void release(uint32_t arrived, uint32_t expected = 0, uint32_t id = 0) {
    SyncEvent e = event(SyncKind::BarrierRelease, 0, 0, 0);
    e.id = id;
    e.count = arrived;
    e.expected = expected;
    monitor_.sync(e);
  }

  std::vector<std::string> kinds() {
    std::vector<std::string> out;
    for (const SyncFinding& f : monitor_.findings()) out.push_back(f.kind);
    return out;
  }

  std::vector<uint32_t> ptx_lines_;
  std::vector<std::string> texts_;
  SyncMonitor monitor_;
};

using Kinds = std::vector<std::string>;

TEST_F(MonitorTest, ParityWaitAfterTwoMorePhasesIsAPhaseOverrun) {
  init(1);
  arrive(0, 0, 1, 5);  // phase 0 completes
  arrive(0, 0, 2, 6);  // phase 1 completes: the stage was reused before the consumer waited
  wait(1, 0, 0, 2);    // the consumer's first wait names phase 0
  end();
  ASSERT_EQ(kinds(), Kinds{"phase_overrun"});
  const SyncFinding& f = monitor_.findings()[0];
  EXPECT_EQ(f.site.ptx_line, 12u);     // the wait
  EXPECT_EQ(f.earlier.ptx_line, 16u);  // the arrival that completed phase 1
  EXPECT_EQ(f.site.thread.x, 32u);
  EXPECT_NE(f.message.find("phase 0"), std::string::npos) << f.message;
}

TEST_F(MonitorTest, PipelineThatWaitsEveryPhaseIsClean) {
  init(1);
  for (uint32_t phase = 0; phase < 6; ++phase) {
    wait(1, 0, phase & 1, phase);  // pending first
    arrive(0, 0, phase + 1);
    wait(1, 0, phase & 1, phase + 1);
  }
  end();
  EXPECT_EQ(kinds(), Kinds{});
}

TEST_F(MonitorTest, ProducerFirstWaitWithParityOneOnAFreshBarrierIsClean) {
  init(1);
  wait(0, 0, 1, 0);  // "empty" barrier: phase -1 counts as complete
  arrive(1, 0, 1);
  wait(0, 0, 0, 1);
  end();
  EXPECT_EQ(kinds(), Kinds{});
}

TEST_F(MonitorTest, TokenWaitTwoPhasesLateIsAPhaseOverrun) {
  init(1);
  arrive(0, 0, 1);
  arrive(0, 0, 2);
  SyncEvent e = event(SyncKind::MbarrierWait, 1, 0, 3);
  e.count = 0;  // the token of phase 0
  e.phase = 0;
  monitor_.sync(e);
  end();
  EXPECT_EQ(kinds(), Kinds{"phase_overrun"});
}

TEST_F(MonitorTest, ArrivalCountBeyondThePendingOnesIsAnOverArrival) {
  init(2);
  arrive(0, 0, 0, 1, 1);
  arrive(0, 1, 1, 1, 2);  // 2 arrivals where 1 was missing
  end();
  EXPECT_EQ(kinds(), Kinds{"over_arrival"});
}

TEST_F(MonitorTest, EveryLaneArrivingOnAPerWarpBarrierIsAnOverArrival) {
  init(2);
  for (uint32_t lane = 0; lane < 32; ++lane) arrive(0, lane, (lane + 1) / 2);
  end();
  ASSERT_EQ(kinds(), Kinds{"over_arrival"});
  EXPECT_EQ(monitor_.findings()[0].earlier.ptx_line, 10u);  // the init
}

TEST_F(MonitorTest, OneArrivalPerWarpOnAPerWarpBarrierIsClean) {
  init(2);
  arrive(0, 0, 0);
  arrive(1, 0, 1);
  arrive(0, 0, 1);
  arrive(1, 0, 2);
  end();
  EXPECT_EQ(kinds(), Kinds{});
}

TEST_F(MonitorTest, MoreTransactionBytesThanExpectedIsAnOverflow) {
  init(1);
  arrive(0, 0, 0, 1, 1, 128);  // arrive.expect_tx 128
  SyncEvent e = event(SyncKind::MbarrierCompleteTx, 0, 0, 3);
  e.count = 256;
  e.phase = 1;
  monitor_.sync(e);
  end();
  EXPECT_EQ(kinds(), Kinds{"tx_overflow"});
}

TEST_F(MonitorTest, ExactTransactionBytesAreClean) {
  init(1);
  arrive(0, 0, 0, 1, 1, 128);
  SyncEvent e = event(SyncKind::MbarrierCompleteTx, 0, 0, 3);
  e.count = 128;
  e.phase = 1;
  monitor_.sync(e);
  end();
  EXPECT_EQ(kinds(), Kinds{});
}

TEST_F(MonitorTest, BytesStillMissingAtExitNeverArrived) {
  init(1);
  arrive(0, 0, 0, 1, 1, 512);
  SyncEvent left = event(SyncKind::MbarrierLeft, 0, 0, 0);
  left.expected = 1;
  left.pending = 0;
  left.tx = 256;
  monitor_.sync(left);
  end();
  EXPECT_EQ(kinds(), (Kinds{"tx_never_arrived", "mid_phase_at_exit"}));
  EXPECT_EQ(monitor_.findings()[0].site.ptx_line, 11u);  // the expect_tx
}

TEST_F(MonitorTest, BarrierAtAPhaseBoundaryAtExitIsClean) {
  init(2);
  SyncEvent left = event(SyncKind::MbarrierLeft, 0, 0, 0);
  left.expected = left.pending = 2;
  monitor_.sync(left);
  end();
  EXPECT_EQ(kinds(), Kinds{});
}

TEST_F(MonitorTest, InvalWhileAThreadWaitsIsReported) {
  init(2);
  arrive(0, 0, 0);
  wait(1, 0, 0, 0);  // pending
  monitor_.sync(event(SyncKind::MbarrierInval, 0, 0, 7));
  end();
  ASSERT_EQ(kinds(), Kinds{"inval_in_use"});
  EXPECT_EQ(monitor_.findings()[0].earlier.ptx_line, 12u);  // the waiting thread's wait
}

TEST_F(MonitorTest, ReinitWithArrivalsPendingIsReported) {
  init(2);
  arrive(0, 0, 0);
  init(2, 8);
  end();
  EXPECT_EQ(kinds(), Kinds{"init_in_use"});
}

TEST_F(MonitorTest, InvalAfterTheLastPhaseIsClean) {
  init(1);
  arrive(0, 0, 1);
  wait(1, 0, 0, 1);
  monitor_.sync(event(SyncKind::MbarrierInval, 0, 0, 7));
  end();
  EXPECT_EQ(kinds(), Kinds{});
}

TEST_F(MonitorTest, UseOfAnUninitializedMbarrierIsReported) {
  monitor_.sync(event(SyncKind::MbarrierUninitialized, 1, 3, 4));
  end();
  ASSERT_EQ(kinds(), Kinds{"uninitialized_mbarrier"});
  EXPECT_EQ(monitor_.findings()[0].site.thread.x, 35u);
}

TEST_F(MonitorTest, WarpsAtDifferentBarSyncInstructionsDiverge) {
  barrier(0, 3);
  barrier(1, 9);
  release(64);
  end();
  ASSERT_EQ(kinds(), Kinds{"barrier_divergence"});
  EXPECT_EQ(monitor_.uniform_barriers(), 0u);
}

TEST_F(MonitorTest, WarpsAtOneBarSyncAreUniform) {
  barrier(0, 3);
  barrier(1, 3);
  release(64);
  end();
  EXPECT_EQ(kinds(), Kinds{});
  EXPECT_EQ(monitor_.uniform_barriers(), 1u);
}

TEST_F(MonitorTest, ThreadsThatExitedBeforeABarrierAreReported) {
  SyncEvent exit = event(SyncKind::ThreadExit, 1, 0, 6);
  exit.mask = 0xffff0000u;
  monitor_.sync(exit);
  barrier(0, 3);
  barrier(1, 3);
  release(48);
  end();
  ASSERT_EQ(kinds(), Kinds{"exit_at_barrier"});
  EXPECT_EQ(monitor_.findings()[0].earlier.ptx_line, 16u);  // the exit
}

TEST_F(MonitorTest, NamedBarrierCompletedByMoreThanItsCountIsAMismatch) {
  barrier(0, 3, 1);
  barrier(1, 4, 1);
  release(64, 32, 1);
  end();
  EXPECT_EQ(kinds(), Kinds{"barrier_count_mismatch"});
}

// The simulator completes a named barrier at the count of the last arrival: arrivals of 64
// then 96 then 96 complete "rightly" at 96, which the check at completion cannot see.
TEST_F(MonitorTest, ANamedBarrierArrivalWithAnotherCountIsAMismatchWhereItArrives) {
  barrier(0, 3, 1, 64, 0);
  barrier(1, 4, 1, 96, 32);
  barrier(0, 5, 1, 96, 64);
  release(96, 96, 1);
  end();
  ASSERT_EQ(kinds(), Kinds{"barrier_count_mismatch"});
  const SyncFinding& f = monitor_.findings()[0];
  EXPECT_EQ(f.site.ptx_line, 14u);     // the arrival with the other count
  EXPECT_EQ(f.earlier.ptx_line, 13u);  // the first arrival of that use
  EXPECT_NE(f.message.find("count of 96 after 32 thread(s)"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("a count of 64"), std::string::npos) << f.message;
}

TEST_F(MonitorTest, AMismatchSeenAtAnArrivalIsNotReportedAgainAtCompletion) {
  barrier(0, 3, 1, 96, 0);
  barrier(1, 4, 1, 32, 32);
  release(64, 32, 1);  // completed above its count too
  end();
  EXPECT_EQ(kinds(), Kinds{"barrier_count_mismatch"});
  // The next use, with one count, is clean.
  begin();
  barrier(0, 3, 1, 64, 0);
  barrier(1, 3, 1, 64, 32);
  release(64, 64, 1);
  end();
  EXPECT_EQ(kinds(), Kinds{"barrier_count_mismatch"});
}

TEST_F(MonitorTest, NamedBarriersAtDifferentInstructionsWithTheirCountAreClean) {
  barrier(0, 3, 1, 64, 0);  // producer bar.arrive / consumer bar.sync: different sites by design
  barrier(1, 4, 1, 64, 32);
  release(64, 64, 1);
  end();
  EXPECT_EQ(kinds(), Kinds{});
}

TEST_F(MonitorTest, DeadlockListsWhereEachWarpWaits) {
  init(1);
  wait(1, 0, 0, 0, 5);  // warp 1 spins on the mbarrier
  SyncEvent at_barrier = event(SyncKind::Stuck, 0, 0, 3);
  at_barrier.mask = 0xffffffffu;
  at_barrier.id = 1;
  at_barrier.count = 32;
  at_barrier.expected = 64;
  monitor_.sync(at_barrier);
  SyncEvent spinning = event(SyncKind::Stuck, 1, 0, 6);
  spinning.on_mbarrier = true;
  monitor_.sync(spinning);
  end();
  ASSERT_EQ(kinds(), Kinds{"deadlock"});
  const SyncFinding& f = monitor_.findings()[0];
  ASSERT_EQ(f.stuck.size(), 2u);
  EXPECT_EQ(f.stuck[0].site.ptx_line, 13u);
  EXPECT_NE(f.stuck[0].waits_on.find("barrier 1 (32 of 64"), std::string::npos);
  EXPECT_EQ(f.stuck[1].site.ptx_line, 15u);  // its last pending wait
  EXPECT_NE(f.stuck[1].waits_on.find("mbarrier at shared offset 0x40"), std::string::npos)
      << f.stuck[1].waits_on;
  nlohmann::json j = to_json(f);
  EXPECT_EQ(j["stuck"].size(), 2u);
}

TEST_F(MonitorTest, AFindingSeenAgainUnderAnotherScheduleIsOneFinding) {
  for (int run = 0; run < 2; ++run) {
    monitor_.set_schedule(run == 0 ? sim::WarpSchedule{}
                                   : sim::WarpSchedule{sim::WarpOrder::Random, 7});
    begin();
    barrier(0, 3);
    barrier(1, 9);
    release(64);
    end();
  }
  ASSERT_EQ(monitor_.findings().size(), 1u);
  const SyncFinding& f = monitor_.findings()[0];
  EXPECT_EQ(f.occurrences, 2u);
  EXPECT_EQ(f.schedules, (std::vector<std::string>{"in_order", "random:7"}));
  nlohmann::json j = to_json(f);
  EXPECT_EQ(j["kind"], "barrier_divergence");
  EXPECT_EQ(j["barrier"], 0);
  EXPECT_EQ(j["site"]["source"], "k.cu:1:1");
  EXPECT_TRUE(j.contains("earlier"));
}

TEST(FanOutObserver, DeliversEveryEventToEveryObserver) {
  SyncMonitor a, b;
  FanOutObserver both({&a, &b});
  std::vector<uint32_t> lines(8, 1);
  std::vector<std::string> texts(8, "x");
  sim::LaunchInfo info;
  info.block = {64, 1, 1};
  info.ptx_lines = &lines;
  info.texts = &texts;
  both.launch_begin(info);
  both.cluster_begin({{0, 0, 0}});
  SyncEvent e;
  e.kind = SyncKind::MbarrierUninitialized;
  e.mask = 1;
  both.sync(e);
  both.launch_end(std::vector<std::string>(8, ""));
  EXPECT_EQ(a.findings().size(), 1u);
  EXPECT_EQ(b.findings().size(), 1u);
}

}  // namespace
}  // namespace kiln::check
