// RaceDetector's happens-before edges: barriers (arrivals join the barrier's clock, its release
// hands it to the waiters), warp syncs, fences (acquire what relaxed reads saw; later relaxed
// writes release), cp.async groups (a wait acquires the async slot's epochs of the groups it
// completed; bulk groups and wgmma groups the same), proxy fences (remembered per thread for the
// async proxy's reads), and mbarriers (arrivals and transaction bytes join the phase's clock; a
// wait that saw the phase complete acquires it).
#include <algorithm>

#include "race_detector_impl.h"

namespace kiln::check {

using sim::SyncEvent;
using sim::SyncKind;

void RaceDetector::Impl::start_cluster(const std::vector<sim::Dim3>& ctas) {
  if (!deferred.empty()) run_deferred(UINT32_MAX, race::Completion::Bulk, 0);
  if (!clusters.empty()) {
    bool unfenced = false;
    for (const race::ThreadState& t : thread_state) unfenced = unfenced || (t.strong && !t.fenced);
    unfenced_cluster.push_back(unfenced);
  }
  cluster = static_cast<uint32_t>(clusters.size());
  clusters.push_back(ctas);
  base = cluster * slots;
  thread_state.resize(threads);
  for (uint32_t i = 0; i < threads; ++i) {
    race::ThreadState& t = thread_state[i];
    t.clock.local.assign(threads, 0);
    t.clock.remote.clear();
    t.clock.local[i] = 1;
    t.pending.clear();
    t.groups.clear();
    t.bulk_groups.clear();
    t.proxy_fences.clear();
    t.async_clock = 1;
    t.tma_slot = t.tma_epoch = 0;
    t.tma_pc = UINT32_MAX;
    t.fenced = t.strong = t.narrowed = false;
    t.fence_scope = race::Scope::Cta;
  }
  warp_state.assign(static_cast<size_t>(cluster_size) * cta_warps, {});
  barriers.assign(static_cast<size_t>(cluster_size) * 17, {});
  for (race::BarrierState& b : barriers) b.clock.local.assign(threads, 0);
  mbarriers.clear();
  channels.clear();
  channel_owner.clear();
  channel_clock.clear();
  shared.reset(cluster_size, info.shared_bytes);
  // Shared memory starts over with the cluster, and so do the sync locations in it.
  std::erase_if(locations, [](const auto& entry) { return (entry.first >> 63) != 0; });
}

namespace {

// The thread's knowledge with its async slot's copies up to `epoch` included (what an arrival
// of its async proxy publishes).
race::Clock with_async(const race::ThreadState& t, uint32_t async_slot, uint32_t epoch) {
  race::Clock c = t.clock;
  c.at(async_slot) = std::max(c.get(async_slot), epoch);
  return c;
}

}  // namespace

void RaceDetector::Impl::sync(const SyncEvent& e) {
  auto each_lane = [&](auto&& f) {
    for (uint32_t m = e.mask; m != 0; m &= m - 1) {
      uint32_t index = thread_index(e.cta, e.warp, static_cast<uint32_t>(__builtin_ctz(m)));
      if (index < threads) f(index, thread_state[index]);
    }
  };
  uint64_t mbar_key = (static_cast<uint64_t>(e.owner) << 32) | e.id;
  if (!deferred.empty()) {
    // A TMA copy's bytes arriving on an mbarrier say which slot its accesses take; any other
    // event finishes a store, which its bulk group completes.
    if (e.kind == SyncKind::MbarrierCompleteTx && e.async && e.mask != 0) {
      run_deferred(thread_index(e.cta, e.warp, static_cast<uint32_t>(__builtin_ctz(e.mask))),
                   race::Completion::Mbarrier, mbar_key);
    }
    if (!deferred.empty()) run_deferred(UINT32_MAX, race::Completion::Bulk, 0);
  }
  switch (e.kind) {
    case SyncKind::BarrierArrive: {
      race::BarrierState& b = barriers[e.id == 16 ? 16 : e.cta * 17 + std::min(e.id, 15u)];
      each_lane([&](uint32_t index, race::ThreadState& t) {
        b.clock.join(t.clock);
        ++t.clock.local[index];
        if (e.waits) {
          b.waiters.push_back(index);
          b.changes.push_back(t.clock.changes);
        }
      });
      break;
    }
    case SyncKind::BarrierRelease: {
      race::BarrierState& b = barriers[e.id == 16 ? 16 : e.cta * 17 + std::min(e.id, 15u)];
      for (size_t w = 0; w < b.waiters.size(); ++w) {
        const uint32_t index = b.waiters[w];
        race::Clock& clock = thread_state[index].clock;
        if (clock.changes != b.changes[w]) {
          clock.join(b.clock);
          continue;
        }
        // It learned nothing since it arrived, so the barrier knows all it knows but its own
        // ticks since: the join is the barrier's clock with the waiter's own entry.
        const uint32_t own = clock.local[index];
        clock.local = b.clock.local;
        clock.remote = b.clock.remote;
        clock.local[index] = own;
        ++clock.changes;
      }
      b.waiters.clear();
      b.changes.clear();
      b.clock.clear();
      break;
    }
    case SyncKind::WarpSync: {
      race::Clock joined;
      joined.local.assign(threads, 0);
      each_lane([&](uint32_t, race::ThreadState& t) { joined.join(t.clock); });
      each_lane([&](uint32_t index, race::ThreadState& t) {
        t.clock.join(joined);
        ++t.clock.local[index];
      });
      break;
    }
    case SyncKind::Fence:
      if (e.ordering == sim::Ordering::Weak) break;  // proxy fences order no generic accesses
      each_lane([&](uint32_t index, race::ThreadState& t) {
        const race::Scope scope = scope_at(e.pc);
        for (const race::PendingRead& read : t.pending) {
          auto it = locations.find(read.key);
          if (it != locations.end() && !it->second.acquire_into(t.clock, cluster, site_of(index),
                                                                std::min(scope, read.scope)))
            t.narrowed = true;
        }
        t.pending.clear();
        t.fenced = true;
        t.fence_scope = std::max(t.fence_scope, scope);
        ++t.clock.local[index];
      });
      break;
    case SyncKind::ProxyFence:
      each_lane([&](uint32_t index, race::ThreadState& t) {
        std::vector<uint32_t>& fences = t.proxy_fences;
        // Bounded: forgetting old fences can only report a write that far back unfenced.
        if (fences.size() >= 65536) fences.erase(fences.begin(), fences.begin() + 32768);
        fences.push_back(t.clock.local[index]);
        ++t.clock.local[index];
      });
      break;
    case SyncKind::WgmmaCommit: {
      uint32_t warp = e.cta * cta_warps + e.warp;
      if (warp < warp_state.size()) {
        race::WarpState& w = warp_state[warp];
        w.groups.push_back(w.clock++);
      }
      break;
    }
    case SyncKind::WgmmaWait: {
      uint32_t warp = e.cta * cta_warps + e.warp;
      if (warp >= warp_state.size()) break;
      race::WarpState& w = warp_state[warp];
      while (w.groups.size() > e.id) {
        w.retired = std::max(w.retired, w.groups.front());
        w.groups.pop_front();
      }
      uint32_t slot = wgmma_slot(e.cta, e.warp);
      each_lane([&](uint32_t, race::ThreadState& t) {
        uint32_t& known = t.clock.at(slot);
        known = std::max(known, w.retired);
      });
      break;
    }
    case SyncKind::BulkCommit:
      each_lane([&](uint32_t index, race::ThreadState& t) {
        uint32_t& epoch = async_epoch(channel(index, race::Completion::Bulk, 0), t);
        t.bulk_groups.push_back(epoch++);
      });
      break;
    case SyncKind::BulkWait:
      each_lane([&](uint32_t index, race::ThreadState& t) {
        uint32_t& known = t.clock.at(channel(index, race::Completion::Bulk, 0));
        while (t.bulk_groups.size() > e.id) {
          known = std::max(known, t.bulk_groups.front());
          t.bulk_groups.pop_front();
        }
      });
      break;
    case SyncKind::AsyncCommit:
      each_lane([&](uint32_t, race::ThreadState& t) { t.groups.push_back(t.async_clock++); });
      break;
    case SyncKind::AsyncWait:
      each_lane([&](uint32_t index, race::ThreadState& t) {
        uint32_t& known = t.clock.at(threads + index);
        while (t.groups.size() > e.id) {
          known = std::max(known, t.groups.front());
          t.groups.pop_front();
        }
      });
      break;
    case SyncKind::MbarrierInit:
      mbarriers[mbar_key] = {};
      break;
    case SyncKind::MbarrierArrive:
    case SyncKind::MbarrierCompleteTx: {
      race::MbarrierState& mb = mbarriers[mbar_key];
      each_lane([&](uint32_t index, race::ThreadState& t) {
        if (e.async && e.kind == SyncKind::MbarrierCompleteTx && t.tma_pc == e.pc) {
          // The copy this instruction made (each destination of a multicast one).
          mb.current.join(with_async(t, t.tma_slot, t.tma_epoch));
          uint32_t& epoch = async_epoch(t.tma_slot, t);
          epoch = std::max(epoch, t.tma_epoch + 1);
        } else if (e.async) {
          // cp.async.mbarrier.arrive: the thread's cp.async copies so far.
          mb.current.join(with_async(t, threads + index, t.async_clock));
          ++t.async_clock;
        } else {
          mb.current.join(t.clock);
          ++t.clock.local[index];
        }
      });
      for (; mb.phase < e.phase; ++mb.phase) {
        mb.completed[mb.phase % 4] = mb.current;
        mb.completed_phase[mb.phase % 4] = mb.phase;
        mb.current.clear();
      }
      break;
    }
    case SyncKind::MbarrierWait: {
      auto it = mbarriers.find(mbar_key);
      if (it == mbarriers.end()) break;
      const race::MbarrierState& mb = it->second;
      if (mb.completed_phase[e.phase % 4] != e.phase) break;
      each_lane([&](uint32_t, race::ThreadState& t) { t.clock.join(mb.completed[e.phase % 4]); });
      break;
    }
    default:  // synccheck's protocol events order nothing
      break;
  }
}

}  // namespace kiln::check
