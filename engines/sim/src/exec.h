// The state a running launch keeps, and Exec: what every instruction handler sees. Handlers
// read and write the current warp's registers, resolve addresses through Exec (bounds and
// alignment checked) and raise faults or scheduling events through it.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "address_space.h"
#include "global_memory.h"
#include "kiln/sim/device.h"
#include "kiln/sim/memory_observer.h"
#include "program.h"

namespace kiln::sim {

struct StackEntry {
  uint32_t pc = 0;  // where this entry resumes (the top's live pc is Warp::pc)
  uint32_t reconverge = kNoReconverge;
  uint32_t mask = 0;
};

struct PendingCopy {
  uint32_t lane = 0;
  uint32_t shared_offset = 0;
  uint64_t source = 0;             // global address
  uint32_t bytes = 0;              // copied
  uint32_t fill = 0;               // zero-filled after the copied bytes
  uint32_t mbarrier = UINT32_MAX;  // cp.async.mbarrier.arrive: the barrier to arrive on
};

enum class WarpState : uint8_t { Ready, AtBarrier, Done };

// A call in progress: the callee's base entry is stack[depth - 1].
struct CallFrame {
  uint32_t site = 0;  // index into Program::call_sites
  uint32_t depth = 0;
  uint32_t returned = 0;             // lanes that executed ret
  std::vector<uint64_t> saved_regs;  // a recursive call: the callee's registers before it
  std::vector<uint32_t> saved_preds;
};

struct Warp {
  uint32_t index = 0;  // warp id within the CTA
  uint32_t pc = 0;
  uint32_t live = 0;   // lanes that exist and have not exited
  uint32_t carry = 0;  // CC.CF per lane (add.cc, addc, ...)
  WarpState state = WarpState::Ready;
  std::vector<StackEntry> stack;
  std::vector<CallFrame> calls;
  uint64_t* regs = nullptr;   // value_slots * 32
  uint32_t* preds = nullptr;  // predicate_slots
  // cp.async: copies not yet committed, and committed groups oldest first.
  std::vector<PendingCopy> uncommitted;
  std::deque<std::vector<PendingCopy>> groups;
};

// A bar.red arrival: where the warp wants the reduction's result.
struct BarrierReduction {
  uint32_t warp = 0;
  uint32_t destination = 0;  // value slot (popc) or predicate index (and, or)
  uint32_t mask = 0;         // the lanes that arrived
  uint8_t mode = 0;          // 1 popc, 2 and, 3 or
};

struct NamedBarrier {
  uint32_t arrived = 0;           // threads
  uint32_t expected = 0;          // 0: all live threads of the CTA
  std::vector<uint32_t> waiting;  // warp indices blocked on it
  // bar.red: the reductions of the predicates of the threads arrived so far.
  uint32_t red_popc = 0;
  bool red_and = true;
  bool red_or = false;
  std::vector<BarrierReduction> reductions;
};

struct Mbarrier {
  uint32_t expected = 0;  // arrivals per phase
  uint32_t pending = 0;   // arrivals still missing in the current phase
  int64_t tx = 0;         // transaction bytes still expected in the current phase
  uint32_t phase = 0;     // completed phases
};

// barrier.cluster: every live thread of every CTA of the cluster.
struct ClusterBarrier {
  uint32_t arrived = 0;
  std::vector<std::pair<uint32_t, uint32_t>> waiting;  // (CTA rank, warp index)
};

// Counters for LaunchStats, kept as plain arrays on the hot path.
struct Counters {
  uint64_t warp_instructions = 0;
  uint64_t lane_instructions = 0;
  std::array<uint64_t, static_cast<size_t>(InstClass::Count)> by_class{};
  std::array<uint64_t, static_cast<size_t>(Space::Count)> bytes{};
  uint64_t bank_conflicts = 0;
  uint64_t divergent_branches = 0;
  uint64_t fences = 0;
};

struct Cta {
  Dim3 id;
  uint32_t rank = 0;  // %cluster_ctarank
  std::vector<Warp> warps;
  std::vector<uint64_t> regs;
  std::vector<uint32_t> preds;
  std::vector<uint8_t> shared;
  std::vector<uint8_t> local;  // threads x local_bytes
  std::array<NamedBarrier, 16> barriers;
  std::unordered_map<uint32_t, Mbarrier> mbarriers;  // by shared offset
  uint32_t live_threads = 0;
  MemoryObserver* observer = nullptr;  // the launch's, for barrier releases
};

enum : uint32_t {
  kEventNone = 0,
  kEventFault = 1,
  kEventBlock = 2,  // the warp waits at a barrier
  kEventYield = 4,  // let other warps run (a failed mbarrier wait)
  kEventExit = 8,   // lanes exited; the runner cleans up the stack
  kEventStep = 16,  // a synchronization operation ran (only with Exec::stop_at_sync)
};

struct Exec {
  // Launch-wide.
  const Program* program = nullptr;
  const uint32_t* operands = nullptr;
  GlobalMemory* global = nullptr;
  const uint8_t* params = nullptr;
  uint32_t param_bytes = 0;
  LaunchConfig config;
  uint32_t shared_bytes = 0;
  Counters counters;
  std::vector<LaunchFault> faults;
  uint64_t slice_steps = 0;  // warp-instructions of the running slice, not yet in counters
  // The cluster (its CTAs by rank), and the CTA and warp running now.
  std::vector<Cta*> cluster_ctas;
  ClusterBarrier* cluster_barrier = nullptr;
  Cta* cta = nullptr;
  Warp* warp = nullptr;
  uint64_t* regs = nullptr;
  uint32_t* preds = nullptr;
  uint32_t event = kEventNone;
  MemoryObserver* observer = nullptr;  // race detection; null on the ordinary path
  // Priority schedules (memory_observer.h): end the warp's turn after each synchronization
  // operation the hooks of observe.h see.
  bool stop_at_sync = false;
  // Device printf: the text of the launch so far, capped at printf_limit bytes (whole calls
  // that do not fit are dropped and counted).
  std::string printf_text;
  uint64_t printf_limit = 0;
  uint64_t printf_dropped = 0;
  // Last global allocation hit: most accesses of a warp fall in the same buffer.
  uint64_t cache_base = 1, cache_size = 0;
  uint8_t* cache_bytes = nullptr;

  uint64_t* reg(uint32_t slot) { return regs + static_cast<size_t>(slot) * 32; }
  const uint32_t* ops(const Inst& inst) const { return operands + inst.ops; }
  uint32_t pred_mask(uint32_t p) const {
    uint32_t m = preds[p & ~kNegated];
    return (p & kNegated) ? ~m : m;
  }
  void set_pred(uint32_t p, uint32_t mask, uint32_t value) {
    preds[p] = (preds[p] & ~mask) | (value & mask);
  }
  // The local memory of a lane of the running warp (program->local_bytes of it).
  uint8_t* local_of(uint32_t lane) {
    return cta->local.data() + static_cast<size_t>(warp->index * 32 + lane) * program->local_bytes;
  }
  uint32_t pc_of(const Inst& inst) const {
    return static_cast<uint32_t>(&inst - program->code.data());
  }

  // Host pointer for `bytes` at `address` in `space`, or nullptr after raising a fault.
  uint8_t* resolve(Space space, uint64_t address, uint32_t bytes, uint32_t align, uint32_t lane,
                   const Inst& inst);
  uint8_t* global_bytes(uint64_t address, uint32_t bytes, uint32_t lane, const Inst& inst);
  // The CTA a shared address names (a shared::cluster address carries a rank) with the rank
  // bits stripped from `address`; nullptr after a fault.
  Cta* shared_owner(uint64_t& address, uint32_t lane, const Inst& inst);
  // Shared offset of a .shared or generic address, checked; UINT32_MAX after a fault. A
  // shared::cluster address of another CTA is accepted only with `owner`, which receives the
  // CTA it names (this CTA otherwise).
  uint32_t shared_offset(Space space, uint64_t address, uint32_t bytes, uint32_t lane,
                         const Inst& inst, Cta** owner = nullptr);

  void fault(const Inst& inst, uint32_t lane, const char* kind, uint64_t address,
             std::string message);
  Dim3 thread_of(uint32_t lane) const;
};

// Active lanes in `mask`; a full warp without a popcount (which, without -mpopcnt, is a call).
inline uint32_t lane_count(uint32_t mask) {
  return mask == 0xffffffffu ? 32u : static_cast<uint32_t>(std::popcount(mask));
}

// Visits the lanes set in `mask`; a full warp takes a branch-free loop.
template <typename F>
inline void for_lanes(uint32_t mask, F&& f) {
  if (mask == 0xffffffffu) {
    for (uint32_t lane = 0; lane < 32; ++lane) f(lane);
  } else {
    while (mask != 0) {
      uint32_t lane = static_cast<uint32_t>(std::countr_zero(mask));
      mask &= mask - 1;
      f(lane);
    }
  }
}

}  // namespace kiln::sim
