// The MemoryObserver hook points (observe.h) and the warp schedules the CTA runner takes from an
// observer: what a launch reports to it, and that a schedule changes the order, not the result.
#include "kiln/sim/memory_observer.h"

#include <gtest/gtest.h>

#include "sim_test_util.h"

namespace kiln::sim::testing {
namespace {

struct Recorder final : MemoryObserver {
  WarpSchedule order;
  std::vector<AccessEvent> accesses;
  std::vector<std::vector<uint64_t>> addresses;
  std::vector<SyncEvent> syncs;
  std::vector<Dim3> clusters;
  uint32_t launches = 0, ends = 0;

  WarpSchedule schedule() const override { return order; }
  void launch_begin(const LaunchInfo& info) override {
    ++launches;
    EXPECT_EQ(info.kernel, "k");
    EXPECT_EQ(info.threads_per_cta, 64u);
    EXPECT_NE(info.ptx_lines, nullptr);
  }
  void cluster_begin(const std::vector<Dim3>& ctas) override {
    clusters.insert(clusters.end(), ctas.begin(), ctas.end());
  }
  void access(const AccessEvent& e) override {
    accesses.push_back(e);
    addresses.emplace_back(e.address, e.address + 32);
  }
  void sync(const SyncEvent& e) override { syncs.push_back(e); }
  void launch_end(const std::vector<std::string>&) override { ++ends; }
};

// s[tid] = tid; bar.sync; out[tid] = s[63 - tid].
const char* kExchange = R"(
.visible .entry k(.param .u64 out)
{
  .shared .align 4 .b32 s[64];
  .reg .b32 %r<10>;
  .reg .b64 %rd<6>;
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, s;
  add.u32 %r4, %r3, %r2;
  st.shared.u32 [%r4], %r1;
  bar.sync 0;
  sub.u32 %r5, 63, %r1;
  shl.b32 %r6, %r5, 2;
  add.u32 %r7, %r3, %r6;
  ld.shared.u32 %r8, [%r7];
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r8;
  ret;
}
)";

class ObserverTest : public SimTest {
 public:
  explicit ObserverTest(Recorder* r = new Recorder) : SimTest(options_for(r)), recorder_(r) {}
  ~ObserverTest() override { delete recorder_; }

  static SimulatorOptions options_for(Recorder* r) {
    SimulatorOptions o;
    o.observer = r;
    return o;
  }

  std::vector<uint32_t> exchange(WarpSchedule schedule) {
    recorder_->order = schedule;
    uint64_t out = zeros<uint32_t>(64);
    run(load(ptx_module(kExchange)), "k", {1}, {64}, Params().add(out));
    return download<uint32_t>(out, 64);
  }

  Recorder* recorder_;
};

TEST_F(ObserverTest, SeesEverySharedAndGlobalAccessAndTheBarrier) {
  std::vector<uint32_t> got = exchange({});
  for (uint32_t t = 0; t < 64; ++t) EXPECT_EQ(got[t], 63 - t);
  Recorder& r = *recorder_;
  EXPECT_EQ(r.launches, 1u);
  EXPECT_EQ(r.ends, 1u);
  ASSERT_EQ(r.clusters.size(), 1u);
  // Per warp: the shared store, the shared load, the global store (ld.param is not reported).
  ASSERT_EQ(r.accesses.size(), 6u);
  const AccessEvent& store = r.accesses[0];
  EXPECT_EQ(store.space, ObservedSpace::Shared);
  EXPECT_EQ(store.kind, AccessKind::Write);
  EXPECT_EQ(store.mask, 0xffffffffu);
  EXPECT_EQ(store.bytes, 4u);
  EXPECT_EQ(r.addresses[0][5], 20u);  // lane 5 of warp 0 wrote s[5]
  size_t arrivals = 0, releases = 0;
  for (const SyncEvent& e : r.syncs) {
    arrivals += e.kind == SyncKind::BarrierArrive && e.waits;
    releases += e.kind == SyncKind::BarrierRelease;
  }
  EXPECT_EQ(arrivals, 2u);
  EXPECT_EQ(releases, 1u);
  size_t global_writes = 0;
  for (const AccessEvent& e : r.accesses) {
    global_writes += e.space == ObservedSpace::Global && e.kind == AccessKind::Write;
  }
  EXPECT_EQ(global_writes, 2u);
}

TEST_F(ObserverTest, ReversedScheduleRunsTheLastWarpFirstWithTheSameResult) {
  std::vector<uint32_t> in_order = exchange({WarpOrder::InOrder, 0});
  EXPECT_EQ(recorder_->accesses.front().warp, 0u);
  recorder_->accesses.clear();
  std::vector<uint32_t> reversed = exchange({WarpOrder::Reversed, 0});
  EXPECT_EQ(recorder_->accesses.front().warp, 1u);
  EXPECT_EQ(in_order, reversed);
}

TEST_F(ObserverTest, RandomScheduleReplaysFromItsSeed) {
  auto warps = [&](uint64_t seed) {
    recorder_->accesses.clear();
    std::vector<uint32_t> got = exchange({WarpOrder::Random, seed});
    for (uint32_t t = 0; t < 64; ++t) EXPECT_EQ(got[t], 63 - t);
    std::vector<uint32_t> order;
    for (const AccessEvent& e : recorder_->accesses) order.push_back(e.warp);
    return order;
  };
  EXPECT_EQ(warps(5), warps(5));
}

}  // namespace
}  // namespace kiln::sim::testing
