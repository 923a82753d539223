// A narrow window into a running launch for dynamic analyses (the race detector in
// engines/check): the CTA runner calls a MemoryObserver on every shared and global access and on
// every synchronization event, and lets the observer pick the order in which warps run. With no
// observer set, each hook point costs one null check.
//
// Threads are named by (CTA rank in the running cluster, warp, lane). Shared addresses are
// offsets into the shared memory of the CTA of rank `owner` (distributed shared memory names
// another CTA of the cluster); global addresses are device addresses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/sim/device.h"

namespace kiln::sim {

// The order in which the runner visits the warps of a cluster each round. Random also varies
// the slice length, so warps interleave at different points.
//
// Pct and Exhaustive are priority schedules over synchronization steps: a warp's turn ends at
// its next synchronization operation (barrier, mbarrier, fence, atomic or strong access, async
// copy or wgmma group), and the next turn goes to the highest-priority warp that can run (a
// warp whose failed mbarrier wait found nothing new is passed over until another warp made a
// step). Pct (probabilistic concurrency testing, Burckhardt et al., ASPLOS 2010) draws, per
// cluster, random distinct priorities and `depth - 1` change points among the cluster's
// expected `steps`: at a change point the running warp drops below every other, so a bug that
// needs `depth` ordering constraints is hit with probability at least 1 / (n * k^(depth-1)) for
// n warps and k steps. Exhaustive runs the warps in the priority order numbered `seed` (a
// permutation of the cluster's warps, 0 .. n!-1), with no change points.
enum class WarpOrder : uint8_t { InOrder, Reversed, Random, Pct, Exhaustive };

struct WarpSchedule {
  WarpOrder order = WarpOrder::InOrder;
  uint64_t seed = 0;   // Random, Pct: seeds the choices; Exhaustive: the permutation's number
  uint32_t depth = 0;  // Pct: the bug depth d (d - 1 change points per cluster)
  // Pct: the expected steps of a cluster (0: 64 per warp for a launch's first cluster, then
  // the steps its previous cluster took; so a seed replays the same schedule).
  uint64_t steps = 0;
};

// What a priority schedule did with one cluster (MemoryObserver::cluster_schedule): its steps,
// a hash of which warp took each step (equal hashes: the same interleaving of synchronization
// operations), and how many warps it ordered.
struct ClusterSchedule {
  uint64_t steps = 0;
  uint64_t trace = 0;
  uint32_t warps = 0;
};

enum class ObservedSpace : uint8_t { Shared, Global };
enum class AccessKind : uint8_t { Read, Write, Atomic };  // Atomic: a read-modify-write
// The memory-model strength of an access or fence (PTX ISA, "Memory Consistency Model"): weak
// (plain ld/st), relaxed (volatile, .relaxed, atom without .sem), acquire, release, acq_rel.
enum class Ordering : uint8_t { Weak, Relaxed, Acquire, Release, AcqRel };

// One warp-wide memory instruction: each lane in `mask` touched `bytes` at `address[lane]`.
struct AccessEvent {
  ObservedSpace space = ObservedSpace::Global;
  AccessKind kind = AccessKind::Read;
  Ordering ordering = Ordering::Weak;
  bool async = false;  // done by the async proxy for `lane` (cp.async, TMA), not the thread
  uint32_t cta = 0;    // rank of the executing CTA
  uint32_t warp = 0;
  uint32_t mask = 0;
  uint32_t bytes = 0;
  uint32_t pc = 0;  // code index (LaunchInfo::ptx_lines)
  const uint64_t* address = nullptr;
  const uint8_t* owner = nullptr;  // Shared: the CTA rank whose memory each lane touched
  // async accesses of the async proxy (TMA copies, wgmma operands): it sees a generic write
  // only after a fence.proxy.async by the writer (cp.async is not in the async proxy).
  bool proxy = false;
  // wgmma.mma_async's operand reads (the warp's A rows; B with the warpgroup's first warp),
  // done for the warp until the wgmma.wait_group retiring the group; `address[i]` for every
  // bit of `mask` is one `bytes` piece of the operands, not a lane's address.
  bool wgmma = false;
};

enum class SyncKind : uint8_t {
  BarrierArrive,   // bar/barrier: `id` 0..15 (16: barrier.cluster); `waits` for .sync
  BarrierRelease,  // the barrier completed: its waiting warps go on
  WarpSync,        // bar.warp.sync and the .sync warp collectives among `mask`
  Fence,           // fence/membar with `ordering` (AcqRel for fence.sc and membar)
  ProxyFence,      // fence.proxy.async: generic accesses before it reach the async proxy
  WgmmaCommit,     // wgmma.commit_group: the warp's wgmma.mma_async since the last one
  WgmmaWait,       // wgmma.wait_group completed the warp's groups past `id` pending
  BulkCommit,      // cp.async.bulk.commit_group: the thread's bulk stores since the last one
  BulkWait,        // cp.async.bulk.wait_group[.read] completed the groups past `id` pending
  AsyncCommit,     // cp.async.commit_group
  AsyncWait,       // cp.async.wait_group/wait_all completed the groups past `id` pending
  MbarrierInit,
  MbarrierArrive,      // an arrival on the mbarrier at (`owner`, `id`), `phase` completed after
  MbarrierCompleteTx,  // transaction bytes of `lane`'s async copies arrived; `phase` as above
  MbarrierWait,        // a successful test_wait/try_wait that saw phase `phase` complete
  // For synccheck (engines/check/dynamic_synccheck.h); the race detector ignores these.
  MbarrierExpectTx,       // mbarrier.expect_tx of `count` bytes
  MbarrierInval,          // mbarrier.inval
  MbarrierWaitPending,    // a test_wait/try_wait that found its phase not complete yet
  MbarrierUninitialized,  // an arrive/wait/tx on an offset holding no mbarrier (the run faults)
  MbarrierLeft,           // the cluster finished with this mbarrier still initialized
  ThreadExit,             // the lanes of `mask` exited
  Stuck,                  // deadlock: warp (`cta`, `warp`) waits at `pc` (`on_mbarrier` or not)
  PartialWarp,  // only lanes `mask` of the warp reached the barrier (or mma) at `pc`: it faults
};

struct SyncEvent {
  SyncKind kind = SyncKind::Fence;
  Ordering ordering = Ordering::AcqRel;
  bool waits = false;
  bool async = false;  // MbarrierArrive: cp.async.mbarrier.arrive (the copies arrive)
  uint32_t cta = 0;    // rank of the executing CTA (BarrierRelease: the barrier's CTA)
  uint32_t warp = 0;
  uint32_t mask = 0;
  uint32_t id = 0;     // barrier id, wait_group count, or mbarrier shared offset
  uint32_t owner = 0;  // mbarriers: the CTA rank holding it
  uint32_t phase = 0;
  uint32_t pc = 0;
  // synccheck's detail. count: mbarrier.init's expected arrivals, an arrival's count,
  // expect_tx/complete_tx bytes, a wait's token or parity; BarrierRelease/Stuck: the threads
  // arrived. expected: BarrierRelease/Stuck: the barrier's thread count (0: every live thread).
  uint32_t count = 0;
  uint32_t expected = 0;
  uint32_t tx_bytes = 0;     // mbarrier.arrive.expect_tx: the bytes it expects
  bool parity = false;       // waits: the .parity form
  bool drop = false;         // mbarrier.arrive_drop
  bool on_mbarrier = false;  // Stuck: spinning on the mbarrier at (`owner`, `id`)
  // MbarrierLeft/Stuck/MbarrierWait*: the mbarrier's state (arrivals missing, bytes missing).
  uint32_t pending = 0;
  int64_t tx = 0;
};

struct LaunchInfo {
  std::string kernel;
  Dim3 grid, block, cluster;
  uint32_t threads_per_cta = 0;
  uint32_t shared_bytes = 0;
  const std::vector<uint32_t>* ptx_lines = nullptr;  // per code index
  const std::vector<std::string>* texts = nullptr;   // per code index
};

class MemoryObserver {
 public:
  virtual ~MemoryObserver() = default;
  virtual WarpSchedule schedule() const { return {}; }
  virtual void launch_begin(const LaunchInfo& info) = 0;
  // The CTAs of the next cluster, by rank; shared memory starts fresh.
  virtual void cluster_begin(const std::vector<Dim3>& ctas) = 0;
  virtual void access(const AccessEvent& event) = 0;
  virtual void sync(const SyncEvent& event) = 0;
  // The launch finished (or faulted); `sources` holds, per code index, the .cu position
  // ("file.cu:line:col", "" without line info).
  virtual void launch_end(const std::vector<std::string>& sources) = 0;
  // A cluster ran under a priority schedule (Pct, Exhaustive).
  virtual void cluster_schedule(const ClusterSchedule& /*cluster*/) {}
};

}  // namespace kiln::sim

// Installs an observer for every later launch of every Device in this process (nullptr:
// none). This is how a driver reaches the Device inside libkiln_cudart_sim.so, which it cannot
// construct itself; a Device's own SimulatorOptions::observer wins over it.
extern "C" void kiln_sim_set_observer(kiln::sim::MemoryObserver* observer);
