// The state of RaceDetector (kiln/check/dynamic_racecheck.h), shared by its three source files:
// race_access.cpp (shadow memory checks), race_sync.cpp (happens-before edges) and
// race_report.cpp (findings).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/check/dynamic_racecheck.h"
#include "shadow_memory.h"
#include "vector_clock.h"

namespace kiln::check {

namespace race {

// A sync location read relaxed since the last fence, with the read's scope.
struct PendingRead {
  uint64_t key = 0;
  Scope scope = Scope::Gpu;
};

struct ThreadState {
  Clock clock;
  std::vector<PendingRead> pending;  // sync locations read relaxed since the last fence
  std::deque<uint32_t> groups;       // cp.async groups committed: the async clock of each
  std::deque<uint32_t> bulk_groups;  // cp.async.bulk groups (TMA stores) committed, the same
  // The thread's own clock at each fence.proxy.async, ascending: a generic write at clock c
  // reaches the async proxy through the first fence at or after c.
  std::vector<uint32_t> proxy_fences;
  uint32_t async_clock = 1;  // the epoch of this thread's cp.async copies in flight
  // The slot and epoch of its last TMA copy completed on an mbarrier, and the instruction:
  // a multicast copy completes on one mbarrier per destination CTA.
  uint32_t tma_slot = 0, tma_epoch = 0, tma_pc = UINT32_MAX;
  bool fenced = false;             // ran a fence: its relaxed writes release
  Scope fence_scope = Scope::Cta;  // the widest fence it ran
  bool strong = false;             // used relaxed (volatile/atomic) accesses
  bool narrowed = false;           // an acquire left out a release because a scope was too narrow
};

// A warp's wgmma.mma_async operand reads run in the warp's own async slot: the ones since the
// last commit at `clock`, then one epoch per committed group until a wait_group retires it.
struct WarpState {
  std::deque<uint32_t> groups;
  uint32_t clock = 1;
  uint32_t retired = 0;  // the last epoch a wait_group retired
};

struct BarrierState {
  Clock clock;
  std::vector<uint32_t> waiters;  // thread indices in the cluster
  std::vector<uint64_t> changes;  // each waiter's Clock::changes when it arrived
};

struct MbarrierState {
  uint32_t phase = 0;  // completed phases
  Clock current;       // arrivals of the phase in progress
  Clock completed[4];  // the clocks of the last completed phases, by phase % 4
  uint32_t completed_phase[4] = {UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX};
};

enum class Hazard : uint8_t { Raw, War, Waw };

// A race as found, before it is described for the report.
struct RawRace {
  Hazard hazard = Hazard::Raw;
  bool shared = false;
  uint64_t address = 0;
  uint32_t bytes = 0;
  Access before;
  Access after;
  const char* cause = nullptr;  // set when the shadow check already knows it
};

// What makes two races one finding: both instructions, the hazard and the cause (and the
// kernel, which the launch number stands for within one launch).
struct FindingKey {
  uint32_t before_pc = 0, after_pc = 0;
  Hazard hazard = Hazard::Raw;
  const char* cause = nullptr;
  bool shared = false;
  uint64_t launch = 0;

  bool same_site(const FindingKey& o) const {
    return before_pc == o.before_pc && after_pc == o.after_pc && hazard == o.hazard &&
           cause == o.cause && shared == o.shared;
  }
  bool operator==(const FindingKey& o) const { return same_site(o) && launch == o.launch; }
};

// A TMA copy's access (either side), held until the copy's completion is known: transaction
// bytes on an mbarrier (a load) or anything else next (a store, completed by its bulk group).
struct DeferredAccess {
  sim::AccessEvent event;  // address and owner are the two below
  uint32_t lane = 0;
  uint64_t address = 0;
  uint8_t owner = 0;
};

// What completes a thread's async copies: each completion has its own clock slot.
enum class Completion : uint8_t { Bulk = 1, Mbarrier = 2 };

}  // namespace race

struct RaceDetector::Impl {
  // Async channels per cluster past the fixed slots: TMA copies completed on different
  // mbarriers (and bulk groups) get a slot each, so that one completion orders only its copies.
  static constexpr uint32_t kChannels = 64;
  uint32_t max_findings = 32;
  sim::WarpSchedule schedule;
  ScheduleLog log;
  std::vector<RaceFinding> findings;
  std::vector<race::FindingKey> keys;   // one per finding
  std::vector<size_t> launch_findings;  // indices of findings whose sources are still empty
  uint64_t evicted = 0, dropped = 0, launches = 0;

  // The launch.
  sim::LaunchInfo info;
  uint32_t cta_threads = 0;  // per CTA
  uint32_t cluster_size = 1;
  uint32_t threads = 0;    // per cluster
  uint32_t cta_warps = 0;  // per CTA
  // Per cluster: threads, then one async slot per thread (cp.async), then one wgmma slot per
  // warp, then kChannels async channels (TMA copies by completion; when they run out, a copy
  // takes its thread's async slot, which can miss a race but never invent one).
  uint32_t slots = 0;
  uint32_t pool_base = 0;
  std::unordered_map<uint64_t, uint32_t> channels;  // (thread, completion, mbarrier) -> slot
  std::vector<uint32_t> channel_owner;              // thread, by slot - pool_base
  std::vector<uint32_t> channel_clock;              // the epoch of its copies in flight
  std::vector<race::DeferredAccess> deferred;
  std::vector<std::vector<sim::Dim3>> clusters;  // CTA ids by cluster sequence number
  std::vector<bool> unfenced_cluster;            // a thread used relaxed accesses, no fence
  std::unordered_map<uint64_t, race::LocationClock> locations;
  std::vector<race::Scope> scopes;  // per code index: the scope its text names
  race::GlobalShadow global;

  // The running cluster.
  uint32_t cluster = 0;  // sequence number
  uint32_t base = 0;     // cluster * slots
  std::vector<race::ThreadState> thread_state;
  std::vector<race::WarpState> warp_state;   // rank * cta_warps + warp
  std::vector<race::BarrierState> barriers;  // rank * 17 + id (16: barrier.cluster, rank 0)
  std::unordered_map<uint64_t, race::MbarrierState> mbarriers;  // owner << 32 | offset
  race::SharedShadow shared;

  bool ordered(const race::Epoch& e, const race::Clock& c) const {
    uint32_t index = e.slot - base;
    if (index < slots) return c.get(index) >= e.clock;
    return race::ordered(e, c, cluster, slots);
  }
  race::Scope scope_at(uint32_t pc) const {
    return pc < scopes.size() ? scopes[pc] : race::Scope::Gpu;
  }
  race::ScopeSite site_of(uint32_t index) const {
    return {cluster, cluster * cluster_size + index / cta_threads};
  }
  uint32_t thread_index(uint32_t cta, uint32_t warp, uint32_t lane) const {
    return cta * cta_threads + warp * 32 + lane;
  }
  uint32_t wgmma_slot(uint32_t cta, uint32_t warp) const {
    return 2 * threads + cta * cta_warps + warp;
  }
  // The thread a slot of the running cluster's numbering stands for (a wgmma slot: its warp's
  // lane 0).
  uint32_t slot_thread(uint32_t local) const {
    if (local < threads) return local;
    if (local < 2 * threads) return local - threads;
    if (local >= pool_base) {
      return local - pool_base < channel_owner.size() ? channel_owner[local - pool_base] : 0;
    }
    uint32_t warp = local - 2 * threads;
    return (warp / cta_warps) * cta_threads + (warp % cta_warps) * 32;
  }

  // race_access.cpp
  void access(const sim::AccessEvent& e);
  void plain_access(const sim::AccessEvent& e);
  void access_lane(const sim::AccessEvent& e, uint32_t lane, uint64_t address, uint8_t owner,
                   uint32_t async_slot);
  // The slot of thread `index`'s copies completed by `completion` (mbarrier: `mbarrier`).
  uint32_t channel(uint32_t index, race::Completion completion, uint64_t mbarrier);
  uint32_t& async_epoch(uint32_t slot, race::ThreadState& t);
  // Runs the deferred TMA accesses of thread `index` (every thread's: UINT32_MAX) on the slot
  // `completion` gives them; returns the slot and epoch of the last.
  void run_deferred(uint32_t index, race::Completion completion, uint64_t mbarrier);
  struct SpanCheck;  // one access's checks over its shadow cells (race_access.cpp)
  void strong_access(const sim::AccessEvent& e, uint32_t lane, uint32_t index);
  void wgmma_access(const sim::AccessEvent& e);
  bool proxy_fenced(const race::Access& write, const race::Clock& knows) const;
  // race_sync.cpp
  void sync(const sim::SyncEvent& e);
  void start_cluster(const std::vector<sim::Dim3>& ctas);
  // race_report.cpp
  void report(const race::RawRace& race);
  RaceAccess describe(const race::Access& a) const;
  void merge_by_source();
};

}  // namespace kiln::check
